// -http.max_rows and -db.statement_timeout (docs/operations.md): parsing, precedence and the messages that
// quote a rejected value.

import { describe, expect, it } from 'vitest';
import { loadConfig, type ConfigSources } from '../../../cli/config/load-config.js';
import { parsePositiveInteger, parseTimeout } from '../../../cli/config/parse-values.js';
import { errorOf } from '../../support/thrown.js';

const load = (sources: Partial<ConfigSources>) => loadConfig({ flags: {}, env: {}, ...sources });
const files = (content: Readonly<Record<string, string>>) => (path: string) => content[path] ?? '';

describe('parseTimeout (milliseconds, Go-style durations)', () => {
  it.each([
    ['10s', 10_000],
    ['500ms', 500],
    ['1m30s', 90_000],
    ['1.5s', 1500],
    ['2h', 7_200_000],
    ['1d', 86_400_000],
    ['10', 10_000],
    [' 10s ', 10_000],
    [3, 3000],
    [0.25, 250],
    ['0', 0],
    ['0s', 0],
    [0, 0],
    ['24d', 2_073_600_000],
  ])('%j = %d ms', (value, ms) => {
    expect(parseTimeout(value, 'db.statement_timeout')).toBe(ms);
  });

  it.each(['', 'abc', '10x', '-1s', '1.5', 's', '10 s', '0.5ms', '25d', -1, Number.NaN])(
    '%j is a usage error quoting the value',
    (value) => {
      const e = errorOf(() => parseTimeout(value, 'db.statement_timeout'));
      expect([e.category, e.code]).toEqual(['usage', 'invalid_config']);
      expect(e.message).toBe(
        `db.statement_timeout '${value}' is not a duration like 10s, 500ms or 1m, a number of seconds, or 0 for no limit, at most 24d`,
      );
    },
  );
});

describe('parsePositiveInteger', () => {
  it.each([
    ['1', 1],
    ['1000', 1000],
    [' 25 ', 25],
    [50, 50],
  ])('%j = %d', (value, n) => {
    expect(parsePositiveInteger(value, 'http.max_rows', 'rows')).toBe(n);
  });

  it.each(['0', '-1', '1.5', 'ten', '1e3', '', '99999999999999999999', 0, 2.5, -3])(
    '%j is a usage error quoting the value',
    (value) => {
      const e = errorOf(() => parsePositiveInteger(value, 'http.max_rows', 'rows'));
      expect([e.category, e.code]).toEqual(['usage', 'invalid_config']);
      expect(e.message).toBe(`http.max_rows '${value}' is not a whole number of rows, at least 1`);
    },
  );
});

describe('loadConfig: limits', () => {
  it('defaults to 1000 rows and 10 s', () => {
    const config = load({});
    expect([config.http.maxRows, config.db.statementTimeoutMs]).toEqual([1000, 10_000]);
  });

  it('takes flag > env > file', () => {
    const readFile = files({ 'rest.yml': 'db: {statement_timeout: 30s}\nhttp: {max_rows: 50}' });
    const file = load({ flags: { config: 'rest.yml' }, readFile });
    expect([file.http.maxRows, file.db.statementTimeoutMs]).toEqual([50, 30_000]);
    const env = { REST_CONFIG: 'rest.yml', REST_HTTP_MAX_ROWS: '60', REST_DB_STATEMENT_TIMEOUT: '2m' };
    const fromEnv = load({ env, readFile });
    expect([fromEnv.http.maxRows, fromEnv.db.statementTimeoutMs]).toEqual([60, 120_000]);
    const flags = { 'http.max_rows': '70', 'db.statement_timeout': '250ms' };
    const fromFlags = load({ flags, env, readFile });
    expect([fromFlags.http.maxRows, fromFlags.db.statementTimeoutMs]).toEqual([70, 250]);
  });

  it('reads YAML numbers: max_rows as rows, statement_timeout as seconds', () => {
    const readFile = files({ 'rest.yml': 'db: {statement_timeout: 2}\nhttp: {max_rows: 7}' });
    const config = load({ flags: { config: 'rest.yml' }, readFile });
    expect([config.http.maxRows, config.db.statementTimeoutMs]).toEqual([7, 2000]);
  });

  it('-db.max_waiting: absent leaves the adapters their default; flag > env > file', () => {
    expect(load({}).db.maxWaiting).toBeUndefined();
    const readFile = files({ 'rest.yml': 'db: {max_waiting: 40}' });
    expect(load({ flags: { config: 'rest.yml' }, readFile }).db.maxWaiting).toBe(40);
    const env = { REST_CONFIG: 'rest.yml', REST_DB_MAX_WAITING: '50' };
    expect(load({ env, readFile }).db.maxWaiting).toBe(50);
    expect(load({ flags: { 'db.max_waiting': '60' }, env, readFile }).db.maxWaiting).toBe(60);
  });

  it('-db.statement_timeout 0 switches the limit off', () => {
    expect(load({ flags: { 'db.statement_timeout': '0' } }).db.statementTimeoutMs).toBe(0);
  });

  it.each([
    [{ flags: { 'http.max_rows': '0' } }, /http.max_rows '0' is not a whole number of rows, at least 1/],
    [{ env: { REST_HTTP_MAX_ROWS: 'lots' } }, /http.max_rows 'lots' is not /],
    [
      { flags: { 'db.statement_timeout': '10 seconds' } },
      /db.statement_timeout '10 seconds' is not a duration /,
    ],
    [{ env: { REST_DB_STATEMENT_TIMEOUT: '-5s' } }, /db.statement_timeout '-5s' is not /],
    [
      { flags: { 'db.max_waiting': '0' } },
      /db.max_waiting '0' is not a whole number of requests, at least 1/,
    ],
  ])('refuses a bad value: %j', (sources, message) => {
    const e = errorOf(() => load(sources));
    expect(e.category).toBe('usage');
    expect(e.message).toMatch(message);
  });

  it.each([
    ['http: {max_rows: [1]}', /http.max_rows must be string or number/],
    ['db: {statement_timeout: true}', /db.statement_timeout must be string or number/],
    ['http: {max_row: 5}', /unknown setting http.max_row/],
    ['http: {max_rows: 0}', /http.max_rows '0' is not a whole number of rows, at least 1/],
  ])('refuses a bad YAML file: %s', (yml, message) => {
    const e = errorOf(() => load({ flags: { config: 'rest.yml' }, readFile: files({ 'rest.yml': yml }) }));
    expect(e.message).toMatch(message);
  });
});
