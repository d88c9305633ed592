import { describe, expect, it } from 'vitest';
import { describeConnectionFailure } from '../../../../../runtime/db/map-db-error.js';
import { mapPgError, pgErrors } from '../../../../../runtime/db/postgres/pg-errors.js';

const withCode = (code: string, extra: Record<string, unknown> = {}): Error =>
  Object.assign(new Error('driver text that must not leak'), { code, ...extra });

describe('mapPgError', () => {
  it.each([
    ['SQLSTATE 08006 (connection failure)', withCode('08006'), 'database_unavailable'],
    ['SQLSTATE 08P01 (protocol violation: our bug, not an outage)', withCode('08P01'), 'internal'],
    ['SQLSTATE 57P03 (starting up)', withCode('57P03'), 'database_unavailable'],
    ['SQLSTATE 22P02', withCode('22P02'), 'invalid_value'],
    ['SQLSTATE 57014 (statement_timeout)', withCode('57014'), 'query_timeout'],
    ['SQLSTATE 42P01 (a table renamed while serving)', withCode('42P01'), 'schema_changed'],
    ['SQLSTATE 42703 (a column renamed while serving)', withCode('42703'), 'schema_changed'],
    ['SQLSTATE 40P01 (deadlock)', withCode('40P01'), 'transaction_conflict'],
    ['SQLSTATE 40001 (serialization failure)', withCode('40001'), 'transaction_conflict'],
    ['SQLSTATE 55P03 (lock timeout)', withCode('55P03'), 'transaction_conflict'],
    ['SQLSTATE 54000 (a key over the btree limit)', withCode('54000'), 'invalid_value'],
    ['SQLSTATE 42601 (a syntax error: ours)', withCode('42601'), 'internal'],
    ['SQLSTATE 42501', withCode('42501'), 'forbidden'],
    ['ECONNREFUSED', withCode('ECONNREFUSED'), 'database_unavailable'],
    [
      'an error without a code (the connection was lost)',
      new Error('Connection terminated'),
      'database_unavailable',
    ],
  ])('maps %s', (_name, error, code) => {
    const mapped = mapPgError(error);
    expect(mapped.code).toBe(code);
    expect(mapped.message).not.toContain('driver text');
  });

  it('a cancelled statement is 503 query_timeout', () => {
    const mapped = mapPgError(withCode('57014'));
    expect([mapped.status, mapped.category]).toEqual([503, 'unavailable']);
  });

  it('names the column of a not-null violation from the structured error', () => {
    expect(mapPgError(withCode('23502', { column: 'title' })).details).toEqual({ column: 'title' });
  });

  it.each([
    ['a code of ours', withCode('DEPTH_ZERO_SELF_SIGNED_CERT'), /^the server's certificate is self-signed/],
    ['a SQLSTATE', withCode('3D000'), /^the database does not exist$/],
  ])('describes a failed first connection by %s', (_name, e, reason) => {
    expect(describeConnectionFailure(e, pgErrors)).toMatch(reason);
  });
});
