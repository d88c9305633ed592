// SQLite's errors as better-sqlite3 reports them: the extended result code as a string
// (https://www.sqlite.org/rescode.html).

import type { RestError } from '../../../errors/rest-error.js';
import { mapDriverError, stringField, type DbErrorKind, type DriverErrors } from '../map-db-error.js';

/** SQLite's generic result code: among others, a statement naming a column or table that is not there. */
export const SQLITE_ERROR = 'SQLITE_ERROR';
/** The adapter's code for SQLITE_ERROR on a schema that changed since it was introspected. */
const SCHEMA_MOVED = 'REST_SQLITE_SCHEMA_MOVED';

/** `e` (SQLITE_ERROR) met a schema other than the one introspected: it maps to schema_changed. */
export const schemaMoved = (e: unknown): Error =>
  Object.assign(new Error('the schema changed since it was introspected', { cause: e }), {
    code: SCHEMA_MOVED,
  });

function kindOf(code: string): DbErrorKind {
  switch (code) {
    case SCHEMA_MOVED:
      return 'schema_changed';
    case 'SQLITE_CONSTRAINT_UNIQUE':
    case 'SQLITE_CONSTRAINT_PRIMARYKEY':
    case 'SQLITE_CONSTRAINT_ROWID':
      return 'unique';
    case 'SQLITE_CONSTRAINT_NOTNULL':
      return 'not_null';
    case 'SQLITE_CONSTRAINT_FOREIGNKEY':
      return 'foreign_key';
    case 'SQLITE_CONSTRAINT_CHECK':
      return 'check';
    case 'SQLITE_MISMATCH':
    case 'SQLITE_CONSTRAINT_DATATYPE': // STRICT tables
    case 'SQLITE_TOOBIG':
      return 'invalid_value';
    case 'SQLITE_NOTADB':
      return 'unavailable';
  }
  // SQLITE_BUSY* reaches us only after the busy timeout has run out.
  if (
    code.startsWith('SQLITE_BUSY') ||
    code.startsWith('SQLITE_CANTOPEN') ||
    code.startsWith('SQLITE_IOERR')
  ) {
    return 'unavailable';
  }
  return 'internal';
}

const CONNECT_REASONS: Readonly<Record<string, string>> = {
  SQLITE_CANTOPEN: 'the file cannot be opened',
  SQLITE_NOTADB: 'the file is not a SQLite database',
};

export const sqliteErrors: DriverErrors = {
  kind: (f) => {
    const code = stringField(f, 'code');
    return code?.startsWith('SQLITE_') === true || code === SCHEMA_MOVED ? kindOf(code) : 'internal';
  },
  // The column is only in the message, read for `details` (the kind never looks at text).
  notNullColumn: (f) =>
    /^NOT NULL constraint failed: [^.]+\.(.+)$/.exec(stringField(f, 'message') ?? '')?.[1],
  connectReason: (f) => {
    const code = stringField(f, 'code');
    return code === undefined ? undefined : CONNECT_REASONS[code];
  },
};

export const mapSqliteError = (e: unknown): RestError => mapDriverError(sqliteErrors, e);
