import { describe, expect, it } from 'vitest';
import { describeConnectionFailure } from '../../../../../runtime/db/map-db-error.js';
import { mapMysqlError, mysqlErrors } from '../../../../../runtime/db/mysql/mysql-errors.js';

const withCode = (code: string, extra: Record<string, unknown> = {}): Error =>
  Object.assign(new Error('driver text that must not leak'), { code, ...extra });

describe('mapMysqlError', () => {
  it.each([
    [
      'MariaDB 1969 (max_statement_time)',
      withCode('ER_STATEMENT_TIMEOUT', { errno: 1969, sqlMessage: 'x' }),
      'query_timeout',
    ],
    [
      'MySQL 3024 (max_execution_time)',
      withCode('ER_QUERY_TIMEOUT', { errno: 3024, sqlMessage: 'x' }),
      'query_timeout',
    ],
    [
      '1062 (duplicate entry)',
      withCode('ER_DUP_ENTRY', { errno: 1062, sqlMessage: 'x' }),
      'unique_violation',
    ],
    [
      'a fatal mysql2 error without a code',
      Object.assign(new Error('closed state'), { fatal: true }),
      'database_unavailable',
    ],
    ['a lost connection', withCode('PROTOCOL_CONNECTION_LOST'), 'database_unavailable'],
    ['a closed pool', withCode('POOL_CLOSED'), 'database_unavailable'],
    ['a mysql2 error with an unknown errno', withCode('ER_X', { errno: 1149, sqlMessage: 'x' }), 'internal'],
    [
      '1054 (a column renamed while serving)',
      withCode('ER_BAD_FIELD_ERROR', { errno: 1054, sqlMessage: 'x' }),
      'schema_changed',
    ],
    [
      '1146 (a table renamed while serving)',
      withCode('ER_NO_SUCH_TABLE', { errno: 1146, sqlMessage: 'x' }),
      'schema_changed',
    ],
    [
      '1213 (deadlock)',
      withCode('ER_LOCK_DEADLOCK', { errno: 1213, sqlMessage: 'x' }),
      'transaction_conflict',
    ],
    [
      '1205 (lock wait timeout)',
      withCode('ER_LOCK_WAIT_TIMEOUT', { errno: 1205, sqlMessage: 'x' }),
      'transaction_conflict',
    ],
    ['ECONNREFUSED', withCode('ECONNREFUSED', { errno: -111 }), 'database_unavailable'],
  ])('maps %s', (_name, error, code) => {
    const mapped = mapMysqlError(error);
    expect(mapped.code).toBe(code);
    expect(mapped.cause).toBe(error);
    expect(mapped.message).not.toContain('driver text');
  });

  it.each([
    ["Column 'title' cannot be null", 1048],
    ["Field 'title' doesn't have a default value", 1364],
  ])('names the column of "%s" for details', (message, errno) => {
    const e = Object.assign(new Error(message), { code: 'ER', errno, sqlMessage: message });
    expect(mapMysqlError(e).details).toEqual({ column: 'title' });
  });

  it('describes a refused login by its errno', () => {
    const e = withCode('ER_ACCESS_DENIED_ERROR', { errno: 1045, sqlMessage: 'x' });
    expect(describeConnectionFailure(e, mysqlErrors)).toBe('authentication failed');
  });
});
