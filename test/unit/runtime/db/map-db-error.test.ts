import { describe, expect, it } from 'vitest';
import { RestError } from '../../../../errors/rest-error.js';
import { createAdapter } from '../../../../runtime/db/create-adapter.js';
import {
  adapterClosed,
  describeConnectionFailure,
  mapDriverError,
  openFailure,
  type DriverErrors,
} from '../../../../runtime/db/map-db-error.js';

const withCode = (code: string, extra: Record<string, unknown> = {}): Error =>
  Object.assign(new Error('driver text that must not leak'), { code, ...extra });

/** A driver that knows none of its errors: what is left is the shared part. */
const unknownDriver: DriverErrors = {
  kind: () => 'internal',
  notNullColumn: () => undefined,
  connectReason: () => undefined,
};

describe('mapDriverError (the shared part)', () => {
  it.each([
    ['ECONNREFUSED', withCode('ECONNREFUSED'), 'database_unavailable'],
    [
      'an AggregateError of refused addresses',
      new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')]),
      'database_unavailable',
    ],
    ['a plain Error', new Error('x'), 'internal'],
    ['a thrown string', 'oops', 'internal'],
    ['null', null, 'internal'],
  ])('maps %s', (_name, error, code) => {
    const mapped = mapDriverError(unknownDriver, error);
    expect(mapped.code).toBe(code);
    expect(mapped.cause).toBe(error);
    expect(mapped.message).not.toContain('driver text');
  });

  it('passes a RestError through unchanged', () => {
    const e = new RestError('forbidden', 'no');
    expect(mapDriverError(unknownDriver, e)).toBe(e);
  });

  it('a closed adapter is 503 database_unavailable', () => {
    expect([adapterClosed().status, adapterClosed().code]).toEqual([503, 'database_unavailable']);
  });

  it('describes the first failed address of an AggregateError', () => {
    expect(describeConnectionFailure(new AggregateError([withCode('ECONNREFUSED')]))).toBe(
      'the connection was refused',
    );
  });

  it.each([
    [
      'an adapter failing to open',
      openFailure('the directory /x does not exist'),
      'the directory /x does not exist',
    ],
    [
      "the driver's words for an error without a code",
      new Error('The server does not support SSL connections'),
      'the server does not support SSL connections',
    ],
    [
      'the first line of an unknown code',
      withCode('XYZ', { message: 'Bad thing.\nat x' }),
      'bad thing (XYZ)',
    ],
    ['an unknown code without words', withCode('XYZ', { message: '' }), 'it failed with XYZ'],
    ['nothing at all', new Error(''), 'it did not answer'],
  ])('describes a failed first connection by %s', (_name, e, reason) => {
    expect(describeConnectionFailure(e)).toBe(reason);
  });

  it('reports a refused localhost port (tried over IPv4 and IPv6) as refused', async () => {
    await expect(createAdapter('postgres://localhost:1/x')).rejects.toMatchObject({
      code: 'database_unavailable',
      message:
        'Cannot connect to the PostgreSQL database at postgres://localhost:1/x: the connection was refused.',
    });
  });
});
