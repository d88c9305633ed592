// The shared half of database errors: what each kind of failure becomes (DbErrorKind → RestError,
// one table), the codes of the adapters' own errors, the Node network codes every networked
// driver meets, and the reason a first connection failed. Each database's folder classifies its
// own driver's errors by SQLSTATE / errno / code only — never by message text —
// (postgres/pg-errors.ts, mysql/mysql-errors.ts, sqlite/sqlite-errors.ts), and its adapter maps
// every driver error once, with that classifier. Messages carry no SQL or driver internals; only
// the startup line of a failed first connection may quote the driver's reason.

import { RestError, isRestError } from '../../errors/rest-error.js';

/** Codes the adapters give errors that have none of their own (pool closed, connection dropped). */
export const ADAPTER_CLOSED = 'REST_ADAPTER_CLOSED';
export const CONNECTION_FAILED = 'REST_CONNECTION_FAILED';
/** An adapter could not open its database for a reason it states itself (the error's message). */
export const OPEN_FAILED = 'REST_OPEN_FAILED';

export type DbErrorKind =
  | 'unique'
  | 'not_null'
  | 'invalid_value'
  | 'too_large'
  | 'foreign_key'
  | 'check'
  | 'forbidden'
  | 'timeout'
  | 'unavailable'
  | 'schema_changed'
  | 'transaction_conflict'
  | 'internal';

/** A driver's error as its classifier reads it: its own fields (see fieldsOf). */
export type DriverFields = Readonly<Record<string, unknown>>;

/** How one driver's errors are read; each database's folder has one. */
export interface DriverErrors {
  /** The kind of failure, by SQLSTATE / errno / code (the shared network codes are read before). */
  kind(f: DriverFields): DbErrorKind;
  /** The column a not-null violation names, for `details`. */
  notNullColumn(f: DriverFields): string | undefined;
  /** Why a first connection failed, for the codes this driver has its own words for. */
  connectReason(f: DriverFields): string | undefined;
}

export const stringField = (f: DriverFields, key: string): string | undefined =>
  typeof f[key] === 'string' ? f[key] : undefined;

export const numberField = (f: DriverFields, key: string): number | undefined =>
  typeof f[key] === 'number' ? f[key] : undefined;

/** An error of the adapters' own making, with a code the shared mapping knows. */
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
export function openFailure(reason: string, cause?: unknown): Error {
  return Object.assign(new Error(reason, cause === undefined ? undefined : { cause }), { code: OPEN_FAILED });
}

/**
 * The error itself or, for a connect that tried several addresses (Node's happy eyeballs, e.g. to
 * `localhost`: an AggregateError without a code), the first address's error.
 */
function fieldsOf(e: unknown): DriverFields {
  const first = e instanceof AggregateError && e.errors.length > 0 ? e.errors[0] : undefined;
  const source: unknown = first !== undefined && sqlStateOf(e) === undefined ? first : e;
  return typeof source === 'object' && source !== null ? (source as DriverFields) : {};
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
  ADAPTER_CLOSED,
  CONNECTION_FAILED,
  OPEN_FAILED,
]);

const build: Readonly<Record<DbErrorKind, (column: string | undefined, cause: unknown) => RestError>> = {
  unique: (_column, cause) =>
    new RestError('unique_violation', 'A row with the same unique value already exists.', {
      cause,
    }),
  not_null: (column, cause) =>
    column === undefined
      ? new RestError('not_null_violation', 'A required value is missing.', { cause })
      : new RestError('not_null_violation', `${column} must not be null.`, {
          cause,
          details: { column },
        }),
  invalid_value: (_column, cause) =>
    new RestError('invalid_value', "A value does not fit its column's type or range.", {
      cause,
    }),
  too_large: (_column, cause) =>
    new RestError('invalid_value', 'A value is too large for the database to store or index.', {
      cause,
    }),
  foreign_key: (_column, cause) =>
    new RestError(
      'foreign_key_violation',
      'The row refers to a row that does not exist, or other rows still refer to it.',
      { cause },
    ),
  check: (_column, cause) =>
    new RestError('check_violation', 'A value breaks a check constraint of the table.', {
      cause,
    }),
  forbidden: (_column, cause) =>
    new RestError('forbidden', 'The database does not allow this operation on these rows.', {
      cause,
    }),
  timeout: (_column, cause) =>
    new RestError(
      'query_timeout',
      'The statement ran longer than the statement timeout (-db.statement_timeout) and was cancelled.',
      { cause },
    ),
  unavailable: (_column, cause) =>
    new RestError('database_unavailable', 'The database is unavailable.', { cause }),
  schema_changed: (_column, cause) =>
    new RestError(
      'schema_changed',
      'A table or column changed while the request was served; send the request again.',
      { cause },
    ),
  transaction_conflict: (_column, cause) =>
    new RestError(
      'transaction_conflict',
      'The database ended the request in a conflict with another transaction; send the request again.',
      { cause },
    ),
  internal: (_column, cause) => new RestError('internal', 'Internal error.', { cause }),
};

/** Maps an error `driver` threw; a RestError passes through unchanged. */
export function mapDriverError(driver: DriverErrors, e: unknown): RestError {
  if (isRestError(e)) return e;
  const f = fieldsOf(e);
  const code = stringField(f, 'code');
  const kind = code !== undefined && NETWORK_CODES.has(code) ? 'unavailable' : driver.kind(f);
  return build[kind](kind === 'not_null' ? driver.notNullColumn(f) : undefined, e);
}

/** Seconds an `overloaded` client is asked to wait. */
const OVERLOADED_RETRY_AFTER = '1';

/** The requests waiting for a database connection are at their bound: refused at once. */
export const overloaded = (): RestError =>
  new RestError('overloaded', 'Too many requests are waiting for the database; send the request again.', {
    headers: { 'Retry-After': OVERLOADED_RETRY_AFTER },
  });

/** The client went away: its request is dropped, or its statement was cancelled. Never sent. */
export const clientGone = (cause?: unknown): RestError =>
  new RestError(
    'client_gone',
    'The client closed its connection; the request was dropped.',
    cause === undefined ? {} : { cause },
  );

/**
 * A cancel that arrives between two statements meets none (PostgreSQL ignores it while it reads
 * a command; MariaDB clears KILL QUERY when the next command starts): while the work it was meant
 * for has not settled, it is sent again after this long.
 */
export const CANCEL_AGAIN_MS = 50;

/**
 * Calls `cancel` when `signal` aborts, and again every CANCEL_AGAIN_MS until `settled()`; `done()`
 * resolves once no cancel is on its way (then the connection may serve someone else).
 */
export function cancelWhenGone(
  signal: AbortSignal | undefined,
  cancel: () => Promise<void>,
  settled: () => boolean,
): { done(): Promise<void> } {
  let running: Promise<void> | undefined;
  const loop = async (): Promise<void> => {
    while (!settled()) {
      await cancel();
      if (!settled()) await new Promise((resolve) => setTimeout(resolve, CANCEL_AGAIN_MS));
    }
  };
  const onAbort = (): void => {
    running ??= loop();
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  return {
    done: async () => {
      signal?.removeEventListener('abort', onAbort);
      await running;
    },
  };
}

/** True once the client of the request that carries `signal` has gone away. */
export const isGone = (signal: AbortSignal | undefined): boolean => signal?.aborted === true;

/** Throws `client_gone` when `signal` is aborted: checked before a request takes a connection. */
export function throwIfGone(signal: AbortSignal | undefined): void {
  if (isGone(signal)) throw clientGone();
}

/** What a statement sent to a closed adapter fails with. */
export const adapterClosed = (): RestError => build.unavailable(undefined, adapterError(ADAPTER_CLOSED));

const CONNECT_REASONS: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'the connection was refused',
  ECONNRESET: 'the connection was reset',
  ETIMEDOUT: 'the connection timed out',
  ENOTFOUND: 'the host was not found',
  EAI_AGAIN: 'the host name could not be resolved',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  [CONNECTION_FAILED]: 'the connection could not be established in time',
};

/** The driver's own words, on one line and without a trailing period. */
function driverSays(message: string): string | undefined {
  const line = message.split('\n')[0]?.trim().replace(/\.$/, '') ?? '';
  return line === '' ? undefined : line.charAt(0).toLowerCase() + line.slice(1);
}

/**
 * A short reason for a failed first connection, for the one-line startup message: an OPEN_FAILED
 * error's own, ours for the codes we (or `driver`) know, otherwise what the driver said (e.g. pg's
 * "The server does not support SSL connections", which has no code) with its code.
 */
export function describeConnectionFailure(e: unknown, driver?: DriverErrors): string {
  const f = fieldsOf(e);
  const code = stringField(f, 'code');
  const message = stringField(f, 'message') ?? '';
  if (code === OPEN_FAILED) return message;
  const known = driver?.connectReason(f) ?? (code === undefined ? undefined : CONNECT_REASONS[code]);
  if (known !== undefined) return known;
  const said = driverSays(message);
  if (said !== undefined) return code === undefined ? said : `${said} (${code})`;
  return code === undefined ? 'it did not answer' : `it failed with ${code}`;
}

/** What an adapter throws when its first connection fails: OPEN_FAILED, saying why. */
export const connectionFailure = (driver: DriverErrors, e: unknown): Error =>
  e instanceof Error && sqlStateOf(e) === OPEN_FAILED
    ? e
    : openFailure(describeConnectionFailure(e, driver), e);
