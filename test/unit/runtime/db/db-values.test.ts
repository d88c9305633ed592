import { describe, expect, it } from 'vitest';
import {
  bindParam,
  integerValue,
  jsonValue,
  localTimestamp,
  utcTimestamp,
} from '../../../../runtime/db/db-values.js';

describe('utcTimestamp', () => {
  it.each([
    ['2024-01-02 03:04:05+00', '2024-01-02T03:04:05Z'],
    ['2024-01-02 05:04:05.5+02', '2024-01-02T03:04:05.5Z'],
    ['2024-01-02 08:34:05.123456+05:30', '2024-01-02T03:04:05.123456Z'],
    ['2024-01-01 23:04:05-04', '2024-01-02T03:04:05Z'],
    ['2024-03-01 00:30:00+01', '2024-02-29T23:30:00Z'],
    ['1900-01-01 00:00:00+00:19:32', '1899-12-31T23:40:28Z'],
    ['2024-01-02T03:04:05.100Z', '2024-01-02T03:04:05.1Z'],
    ['2024-01-02T03:04Z', '2024-01-02T03:04:00Z'],
    ['infinity', 'infinity'],
    ['0044-03-15 00:00:00+00 BC', '0044-03-15 00:00:00+00 BC'],
  ])('%s → %s', (input, output) => {
    expect(utcTimestamp(input)).toBe(output);
  });
});

describe('localTimestamp', () => {
  it.each([
    ['2024-01-02 03:04:05', '2024-01-02T03:04:05'],
    ['2024-01-02 03:04:05.500000', '2024-01-02T03:04:05.5'],
    ['2024-01-02T03:04:05.000', '2024-01-02T03:04:05'],
    ['2024-01-02 03:04', '2024-01-02T03:04:00'],
    ['2024-01-02', '2024-01-02T00:00:00'],
    ['2024-01-02T03:04.5', '2024-01-02T03:04.5'],
    ['not a timestamp', 'not a timestamp'],
  ])('%s → %s', (input, output) => {
    expect(localTimestamp(input)).toBe(output);
  });
});

describe('integerValue', () => {
  it.each([
    [42n, 42],
    ['-9007199254740991', -9007199254740991],
    ['9007199254740992', '9007199254740992'],
    [-9223372036854775808n, '-9223372036854775808'],
    [7, 7],
  ])('%s → %j', (input, output) => {
    expect(integerValue(input)).toBe(output);
  });
});

describe('bindParam', () => {
  it('binds objects and arrays as JSON text and leaves scalars, dates and buffers alone', () => {
    const date = new Date(0);
    const buffer = Buffer.from('x');
    expect([{ a: 1 }, [1, 'b'], 'text', 3, true, null, undefined, date, buffer].map(bindParam)).toStrictEqual(
      ['{"a":1}', '[1,"b"]', 'text', 3, true, null, null, date, buffer],
    );
  });
});

describe('jsonValue', () => {
  it('parses JSON text and returns other values unchanged', () => {
    expect([
      jsonValue('{"a":[1]}'),
      jsonValue('"s"'),
      jsonValue('nope'),
      jsonValue(null),
      jsonValue(5),
    ]).toStrictEqual([{ a: [1] }, 's', 'nope', null, 5]);
  });
});
