// The one place that turns driver errors (pg, mysql2, better-sqlite3, node:net) into RestErrors,
// by SQLSTATE / errno / code only — never by message text. Messages carry no SQL or driver
// internals; only the startup line of a failed first connection may quote the driver's reason.

import { RestError, isRestError } from '../../errors/rest-error.js';

/** Codes the adapters give errors that have none of their own (pool closed, connection dropped). */
export const ADAPTER_CLOSED = 'REST_ADAPTER_CLOSED';
export const CONNECTION_FAILED = 'REST_CONNECTION_FAILED';
/** An adapter could not open its database for a reason it states itself (the error's message). */
export const OPEN_FAILED = 'REST_OPEN_FAILED';

type DbErrorKind =
  | 'unique'
  | 'not_null'
  | 'invalid_value'
  | 'foreign_key'
  | 'check'
  | 'forbidden'
  | 'timeout'
  | 'unavailable'
  | 'internal';

/** An error of the adapters' own making, with a code mapDbError knows. */
export function adapterError(code: typeof ADAPTER_CLOSED | typeof CONNECTION_FAILED, cause?: unknown): Error {
  const message =
    code === ADAPTER_CLOSED ? 'the database adapter is closed' : 'the connection to the database failed';
  return Object.assign(new Error(message, cause === undefined ? undefined : { cause }), { code });
}

/** A driver error's SQLSTATE (PostgreSQL) or code, when it has a string one. */
export function sqlStateOf(e: unknown): string | undefined {
  const code = (e as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** An error of OPEN_FAILED whose message is the reason shown after the database's name. */
export function openFailure(reason: string): Error {
  return Object.assign(new Error(reason), { code: OPEN_FAILED });
}

interface DriverFields {
  readonly code: string | undefined;
  readonly errno: number | undefined;
  /** mysql2 sets sqlMessage; pg and SQLite do not. */
  readonly isMysql: boolean;
  /** mysql2 marks errors after which the connection is unusable (e.g. "closed state", no code). */
  readonly fatal: boolean;
  readonly column: string | undefined;
  readonly message: string;
}

function fieldsOf(e: unknown): DriverFields {
  // Node's happy-eyeballs connect (e.g. to `localhost`) fails with an AggregateError of per-address errors.
  const first = e instanceof AggregateError && e.errors.length > 0 ? e.errors[0] : undefined;
  const source = (first !== undefined && typeof (e as { code?: unknown }).code !== 'string' ? first : e) as {
    code?: unknown;
    errno?: unknown;
    sqlMessage?: unknown;
    fatal?: unknown;
    column?: unknown;
    message?: unknown;
  } | null;
  const get = <T>(key: keyof NonNullable<typeof source>, type: 'string' | 'number'): T | undefined =>
    source !== null && typeof source === 'object' && typeof source[key] === type
      ? (source[key] as T)
      : undefined;
  return {
    code: get<string>('code', 'string'),
    errno: get<number>('errno', 'number'),
    isMysql: get<string>('sqlMessage', 'string') !== undefined,
    fatal: source !== null && typeof source === 'object' && source.fatal === true,
    column: get<string>('column', 'string'),
    message: get<string>('message', 'string') ?? '',
  };
}

const NETWORK_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'POOL_CLOSED',
  ADAPTER_CLOSED,
  CONNECTION_FAILED,
  OPEN_FAILED,
]);

// https://www.postgresql.org/docs/current/errcodes-appendix.html
function classifyPostgres(sqlState: string): DbErrorKind {
  switch (sqlState) {
    case '23505':
      return 'unique';
    case '23502':
      return 'not_null';
    case '23503':
      return 'foreign_key';
    case '23514':
      return 'check';
    case '42501':
      return 'forbidden';
    case '57014': // query_canceled: statement_timeout ran out
      return 'timeout';
    // 08P01 (protocol violation) is a bug of ours, e.g. a wrong parameter count: not an outage.
    case '08P01':
      return 'internal';
    case '57P01': // admin_shutdown
    case '57P02': // crash_shutdown
    case '57P03': // cannot_connect_now (starting up)
    case '53300': // too_many_connections
    case '28000': // invalid_authorization_specification
    case '28P01': // invalid_password
    case '3D000': // invalid_catalog_name: the database does not exist
      return 'unavailable';
  }
  if (sqlState.startsWith('22')) return 'invalid_value';
  if (sqlState.startsWith('08')) return 'unavailable';
  return 'internal';
}

// https://mariadb.com/kb/en/mariadb-error-code-reference/
const MYSQL_ERRNOS: ReadonlyMap<number, DbErrorKind> = new Map<number, DbErrorKind>([
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

// https://www.sqlite.org/rescode.html (better-sqlite3 reports the extended code as a string)
function classifySqlite(code: string): DbErrorKind {
  switch (code) {
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

function classify(f: DriverFields): DbErrorKind {
  if (f.code !== undefined && NETWORK_CODES.has(f.code)) return 'unavailable';
  const byErrno = f.isMysql && f.errno !== undefined ? MYSQL_ERRNOS.get(f.errno) : undefined;
  if (byErrno !== undefined) return byErrno;
  if (f.fatal) return 'unavailable';
  if (f.isMysql) return 'internal';
  if (f.code === undefined) return 'internal';
  if (f.code.startsWith('SQLITE_')) return classifySqlite(f.code);
  if (/^[0-9A-Z]{5}$/.test(f.code)) return classifyPostgres(f.code);
  return 'internal';
}

// Column names are in the structured pg error; mysql2 and SQLite only put them in the message,
// so they are read from it for `details` only (the classification above never looks at text).
function notNullColumn(f: DriverFields): string | undefined {
  if (f.column !== undefined) return f.column;
  const m =
    /^Column '([^']+)' cannot be null$/.exec(f.message) ??
    /^Field '([^']+)' doesn't have a default value$/.exec(f.message) ??
    /^NOT NULL constraint failed: [^.]+\.(.+)$/.exec(f.message);
  return m?.[1];
}

const build: Readonly<Record<DbErrorKind, (f: DriverFields, cause: unknown) => RestError>> = {
  unique: (_f, cause) =>
    new RestError('conflict', 'unique_violation', 'A row with the same unique value already exists.', {
      cause,
    }),
  not_null: (f, cause) => {
    const column = notNullColumn(f);
    return column === undefined
      ? new RestError('invalid_input', 'not_null_violation', 'A required value is missing.', { cause })
      : new RestError('invalid_input', 'not_null_violation', `${column} must not be null.`, {
          cause,
          details: { column },
        });
  },
  invalid_value: (_f, cause) =>
    new RestError('invalid_input', 'invalid_value', "A value does not fit its column's type or range.", {
      cause,
    }),
  foreign_key: (_f, cause) =>
    new RestError(
      'conflict',
      'foreign_key_violation',
      'The row refers to a row that does not exist, or other rows still refer to it.',
      { cause },
    ),
  check: (_f, cause) =>
    new RestError('invalid_input', 'check_violation', 'A value breaks a check constraint of the table.', {
      cause,
    }),
  forbidden: (_f, cause) =>
    new RestError('forbidden', 'forbidden', 'The database does not allow this operation on these rows.', {
      cause,
    }),
  timeout: (_f, cause) =>
    new RestError(
      'unavailable',
      'query_timeout',
      'The statement ran longer than the statement timeout (-db.statement_timeout) and was cancelled.',
      { cause },
    ),
  unavailable: (_f, cause) =>
    new RestError('unavailable', 'database_unavailable', 'The database is unavailable.', { cause }),
  internal: (_f, cause) => new RestError('internal', 'internal', 'Internal error.', { cause }),
};

/** Maps any error thrown by a driver; a RestError passes through unchanged. */
export function mapDbError(e: unknown): RestError {
  if (isRestError(e)) return e;
  const f = fieldsOf(e);
  return build[classify(f)](f, e);
}

const CONNECT_REASONS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'the connection was refused',
  ECONNRESET: 'the connection was reset',
  ETIMEDOUT: 'the connection timed out',
  ENOTFOUND: 'the host was not found',
  EAI_AGAIN: 'the host name could not be resolved',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  [CONNECTION_FAILED]: 'the connection could not be established in time',
  '28000': 'authentication failed',
  '28P01': 'authentication failed',
  '3D000': 'the database does not exist',
  '57P03': 'the server is starting up',
  '53300': 'the server has too many connections',
  SQLITE_CANTOPEN: 'the file cannot be opened',
  SQLITE_NOTADB: 'the file is not a SQLite database',
  // TLS (https://nodejs.org/api/tls.html#x509-certificate-error-codes), with the URL parameters that help.
  DEPTH_ZERO_SELF_SIGNED_CERT:
    "the server's certificate is self-signed and not trusted (name it with sslrootcert=<file>, or use sslmode=require to encrypt without verifying)",
  SELF_SIGNED_CERT_IN_CHAIN:
    "the server's certificate comes from an untrusted CA (name the CA with sslrootcert=<file>, or use sslmode=require to encrypt without verifying)",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE:
    "the server's certificate cannot be verified (name its CA with sslrootcert=<file>, or use sslmode=require to encrypt without verifying)",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
    "the server's certificate cannot be verified (name its CA with sslrootcert=<file>, or use sslmode=require to encrypt without verifying)",
  ERR_TLS_CERT_ALTNAME_INVALID:
    "the server's certificate is not for this host name (sslmode=verify-ca checks the CA only)",
  CERT_HAS_EXPIRED: "the server's certificate has expired",
};

const MYSQL_CONNECT_REASONS: Readonly<Record<number, string>> = {
  1040: 'the server has too many connections',
  1045: 'authentication failed',
  1049: 'the database does not exist',
};

/** The driver's own words, on one line and without a trailing period. */
function driverSays(f: DriverFields): string | undefined {
  const line = f.message.split('\n')[0]?.trim().replace(/\.$/, '') ?? '';
  return line === '' ? undefined : line.charAt(0).toLowerCase() + line.slice(1);
}

/**
 * A short reason for a failed first connection, for the one-line startup message: ours for the
 * codes we know, otherwise what the driver said (e.g. pg's "The server does not support SSL
 * connections", which has no code) with its code.
 */
export function describeConnectionFailure(e: unknown): string {
  const f = fieldsOf(e);
  if (f.code === OPEN_FAILED) return f.message;
  const byErrno = f.isMysql && f.errno !== undefined ? MYSQL_CONNECT_REASONS[f.errno] : undefined;
  const known = byErrno ?? (f.code === undefined ? undefined : CONNECT_REASONS[f.code]);
  if (known !== undefined) return known;
  const said = driverSays(f);
  if (said !== undefined) return f.code === undefined ? said : `${said} (${f.code})`;
  return f.code === undefined ? 'it did not answer' : `it failed with ${f.code}`;
}
