// MySQL/MariaDB's errors as mysql2 reports them: server errors by errno, the client's own by its
// code, and `fatal` on the errors after which the connection is unusable.

import type { RestError } from '../../../errors/rest-error.js';
import {
  mapDriverError,
  numberField,
  stringField,
  type DbErrorKind,
  type DriverErrors,
  type DriverFields,
} from '../map-db-error.js';

// https://mariadb.com/kb/en/mariadb-error-code-reference/
const ERRNOS: ReadonlyMap<number, DbErrorKind> = new Map<number, DbErrorKind>([
  [1062, 'unique'], // ER_DUP_ENTRY
  [1586, 'unique'], // ER_DUP_ENTRY_WITH_KEY_NAME
  [1048, 'not_null'], // ER_BAD_NULL_ERROR
  [1364, 'not_null'], // ER_NO_DEFAULT_FOR_FIELD
  [1263, 'not_null'], // ER_WARN_NULL_TO_NOTNULL (multi-row insert)
  [1366, 'invalid_value'], // ER_TRUNCATED_WRONG_VALUE_FOR_FIELD
  [1292, 'invalid_value'], // ER_TRUNCATED_WRONG_VALUE
  [1264, 'invalid_value'], // ER_WARN_DATA_OUT_OF_RANGE
  [1406, 'invalid_value'], // ER_DATA_TOO_LONG
  [1265, 'invalid_value'], // WARN_DATA_TRUNCATED
  [1690, 'invalid_value'], // ER_DATA_OUT_OF_RANGE
  [3140, 'invalid_value'], // ER_INVALID_JSON_TEXT (MySQL)
  [1451, 'foreign_key'], // ER_ROW_IS_REFERENCED_2
  [1452, 'foreign_key'], // ER_NO_REFERENCED_ROW_2
  [1054, 'schema_changed'], // ER_BAD_FIELD_ERROR: a column renamed or dropped while serving
  [1146, 'schema_changed'], // ER_NO_SUCH_TABLE: a table renamed or dropped while serving
  [1213, 'transaction_conflict'], // ER_LOCK_DEADLOCK
  [1205, 'transaction_conflict'], // ER_LOCK_WAIT_TIMEOUT
  [1969, 'timeout'], // ER_STATEMENT_TIMEOUT (MariaDB max_statement_time)
  [3024, 'timeout'], // ER_QUERY_TIMEOUT (MySQL max_execution_time)
  [4025, 'check'], // ER_CONSTRAINT_FAILED (MariaDB)
  [3819, 'check'], // ER_CHECK_CONSTRAINT_VIOLATED (MySQL)
  [1040, 'unavailable'], // ER_CON_COUNT_ERROR
  [1045, 'unavailable'], // ER_ACCESS_DENIED_ERROR
  [1049, 'unavailable'], // ER_BAD_DB_ERROR
  [1053, 'unavailable'], // ER_SERVER_SHUTDOWN
  [1927, 'unavailable'], // ER_CONNECTION_KILLED (MariaDB)
  [2002, 'unavailable'], // CR_CONNECTION_ERROR
  [2003, 'unavailable'], // CR_CONN_HOST_ERROR
  [2006, 'unavailable'], // CR_SERVER_GONE_ERROR
  [2013, 'unavailable'], // CR_SERVER_LOST
]);

/** mysql2's own codes for a connection or pool that is gone. */
const LOST_CODES: ReadonlySet<string> = new Set([
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'POOL_CLOSED',
]);

const CONNECT_REASONS: Readonly<Record<number, string>> = {
  1040: 'the server has too many connections',
  1045: 'authentication failed',
  1049: 'the database does not exist',
};

/** The errno of an error the server sent (mysql2 sets sqlMessage on those; Node's errnos are negative). */
const serverErrno = (f: DriverFields): number | undefined =>
  stringField(f, 'sqlMessage') === undefined ? undefined : numberField(f, 'errno');

export const mysqlErrors: DriverErrors = {
  kind: (f) => {
    const code = stringField(f, 'code');
    if (code !== undefined && LOST_CODES.has(code)) return 'unavailable';
    const errno = serverErrno(f);
    const byErrno = errno === undefined ? undefined : ERRNOS.get(errno);
    if (byErrno !== undefined) return byErrno;
    // mysql2 marks errors after which the connection is unusable (e.g. "closed state", no code).
    return f['fatal'] === true ? 'unavailable' : 'internal';
  },
  // The column is only in the message, read for `details` (the kind never looks at text).
  notNullColumn: (f) => {
    const message = stringField(f, 'message') ?? '';
    return (/^Column '([^']+)' cannot be null$/.exec(message) ??
      /^Field '([^']+)' doesn't have a default value$/.exec(message))?.[1];
  },
  connectReason: (f) => {
    const errno = serverErrno(f);
    return errno === undefined ? undefined : CONNECT_REASONS[errno];
  },
};

export const mapMysqlError = (e: unknown): RestError => mapDriverError(mysqlErrors, e);
