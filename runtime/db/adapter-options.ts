// Options every adapter accepts: where to report background connection errors (and a new SQLite
// file), and the pool size.

/** The subset of a pino logger the adapters use. */
export interface DbLogger {
  info(fields: Readonly<Record<string, unknown>>, message: string): void;
  warn(fields: Readonly<Record<string, unknown>>, message: string): void;
}

export interface AdapterOptions {
  readonly logger?: DbLogger;
  /** Connections per pool (PostgreSQL, MySQL); SQLite uses one connection. Default 10. */
  readonly poolSize?: number;
  /**
   * Most requests that wait for a database connection (PostgreSQL, MariaDB); one more is refused
   * at once with 503 `overloaded` and Retry-After (`-db.max_waiting`). Default DEFAULT_MAX_WAITING.
   */
  readonly maxWaiting?: number;
  /** `false`: never use `… RETURNING`, as on MySQL (tests of the read-back path on MariaDB). */
  readonly returning?: boolean;
  /**
   * Longest a statement may run before the database cancels it (`-db.statement_timeout`); 0 or
   * absent: no limit of ours. PostgreSQL and MariaDB only: better-sqlite3 cannot interrupt one.
   */
  readonly statementTimeoutMs?: number;
  /**
   * PostgreSQL through a transaction-mode pooler (`-db.pooler transaction`): statements unnamed,
   * the statement timeout set inside each transaction instead of at connect.
   */
  readonly pooler?: 'transaction';
}

export const DEFAULT_POOL_SIZE = 10;
/**
 * Requests that may wait for a connection of a pool of DEFAULT_POOL_SIZE: at about a millisecond a
 * request, a quarter of a second of work queued — a burst of clients is served, while a flood
 * (slow statements, clients that went away) is refused at once instead of waiting minutes.
 */
export const DEFAULT_MAX_WAITING = 256;
/** How long a new connection may take before the request fails with 503. */
export const CONNECT_TIMEOUT_MS = 5000;

/** What is safe to log about a connection error: its code and message, never its config. */
export const errorFields = (e: unknown): Readonly<Record<string, unknown>> => {
  const { code, message } = (e ?? {}) as { code?: unknown; message?: unknown };
  return {
    code: typeof code === 'string' ? code : undefined,
    error: typeof message === 'string' ? message : String(e),
  };
};
