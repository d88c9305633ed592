import { describe, expect, it } from 'vitest';
import { describeConnectionFailure } from '../../../../../runtime/db/map-db-error.js';
import { mapSqliteError, schemaMoved, sqliteErrors } from '../../../../../runtime/db/sqlite/sqlite-errors.js';

const withCode = (code: string, extra: Record<string, unknown> = {}): Error =>
  Object.assign(new Error('driver text that must not leak'), { code, ...extra });

describe('mapSqliteError', () => {
  it.each([
    ['SQLITE_BUSY_SNAPSHOT', withCode('SQLITE_BUSY_SNAPSHOT'), 'database_unavailable'],
    ['SQLITE_CONSTRAINT_UNIQUE', withCode('SQLITE_CONSTRAINT_UNIQUE'), 'unique_violation'],
    ['SQLITE_CONSTRAINT_DATATYPE', withCode('SQLITE_CONSTRAINT_DATATYPE'), 'invalid_value'],
    ['SQLITE_ERROR', withCode('SQLITE_ERROR'), 'internal'],
    ['a TypeError without a code', new TypeError('x'), 'internal'],
  ])('maps %s', (_name, error, code) => {
    const mapped = mapSqliteError(error);
    expect(mapped.code).toBe(code);
    expect(mapped.cause).toBe(error);
    expect(mapped.message).not.toContain('driver text');
  });

  it('SQLITE_ERROR on a schema that moved since it was introspected is 503 schema_changed', () => {
    const mapped = mapSqliteError(schemaMoved(withCode('SQLITE_ERROR')));
    expect([mapped.status, mapped.code]).toEqual([503, 'schema_changed']);
    expect(mapped.message).not.toContain('driver text');
  });

  it('names the column of a not-null violation from the message, for details', () => {
    const e = Object.assign(new Error('NOT NULL constraint failed: items.title'), {
      code: 'SQLITE_CONSTRAINT_NOTNULL',
    });
    expect(mapSqliteError(e).details).toEqual({ column: 'title' });
  });

  it('describes a file that is not a database', () => {
    expect(describeConnectionFailure(withCode('SQLITE_NOTADB'), sqliteErrors)).toBe(
      'the file is not a SQLite database',
    );
  });
});
