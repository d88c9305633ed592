import { describe, expect, it } from 'vitest';
import { RestError } from '../../../../errors/rest-error.js';
import { createAdapter } from '../../../../runtime/db/create-adapter.js';
import { describeConnectionFailure, mapDbError, openFailure } from '../../../../runtime/db/map-db-error.js';

const withCode = (code: string, extra: Record<string, unknown> = {}): Error =>
  Object.assign(new Error('driver text that must not leak'), { code, ...extra });

describe('mapDbError', () => {
  it.each([
    ['SQLSTATE 08006 (connection failure)', withCode('08006'), 'database_unavailable'],
    ['SQLSTATE 08P01 (protocol violation: our bug, not an outage)', withCode('08P01'), 'internal'],
    ['SQLSTATE 57P03 (starting up)', withCode('57P03'), 'database_unavailable'],
    ['SQLSTATE 22P02', withCode('22P02'), 'invalid_value'],
    ['SQLSTATE 57014 (statement_timeout)', withCode('57014'), 'query_timeout'],
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
    ['SQLSTATE 42P01 (undefined table)', withCode('42P01'), 'internal'],
    ['ECONNREFUSED', withCode('ECONNREFUSED'), 'database_unavailable'],
    [
      'an AggregateError of refused addresses',
      new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')]),
      'database_unavailable',
    ],
    [
      'a fatal mysql2 error without a code',
      Object.assign(new Error('closed state'), { fatal: true }),
      'database_unavailable',
    ],
    ['a mysql2 error with an unknown errno', withCode('ER_X', { errno: 1146, sqlMessage: 'x' }), 'internal'],
    ['SQLITE_BUSY_SNAPSHOT', withCode('SQLITE_BUSY_SNAPSHOT'), 'database_unavailable'],
    ['SQLITE_ERROR', withCode('SQLITE_ERROR'), 'internal'],
    ['a plain Error', new Error('x'), 'internal'],
    ['a thrown string', 'oops', 'internal'],
    ['null', null, 'internal'],
  ])('maps %s', (_name, error, code) => {
    const mapped = mapDbError(error);
    expect(mapped.code).toBe(code);
    expect(mapped.cause).toBe(error);
    expect(mapped.message).not.toContain('driver text');
  });

  it('a cancelled statement is 503 query_timeout', () => {
    const mapped = mapDbError(withCode('57014'));
    expect([mapped.status, mapped.category]).toEqual([503, 'unavailable']);
  });

  it('passes a RestError through unchanged', () => {
    const e = new RestError('forbidden', 'forbidden', 'no');
    expect(mapDbError(e)).toBe(e);
  });

  it('describes the first failed address of an AggregateError', () => {
    expect(describeConnectionFailure(new AggregateError([withCode('ECONNREFUSED')]))).toBe(
      'the connection was refused',
    );
  });

  it.each([
    ['a code of ours', withCode('DEPTH_ZERO_SELF_SIGNED_CERT'), /^the server's certificate is self-signed/],
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
    if (typeof reason === 'string') expect(describeConnectionFailure(e)).toBe(reason);
    else expect(describeConnectionFailure(e)).toMatch(reason);
  });

  it('reports a refused localhost port (tried over IPv4 and IPv6) as refused', async () => {
    await expect(createAdapter('postgres://localhost:1/x')).rejects.toMatchObject({
      code: 'database_unavailable',
      message:
        'Cannot connect to the PostgreSQL database at postgres://localhost:1/x: the connection was refused.',
    });
  });
});
