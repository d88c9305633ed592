// The typed, validated configuration the server runs with (docs/operations.md); cli/config/ builds it
// from flags, environment and the YAML file.

export interface ListenAddress {
  /** Undefined: every interface (`:port`). */
  readonly host: string | undefined;
  /** 0 = any free port. */
  readonly port: number;
}

export interface CorsConfig {
  readonly enabled: boolean;
  /** Exact origins (`https://app.example`) or `*` for any origin. */
  readonly origins: readonly string[];
}

export interface Config {
  readonly addr: ListenAddress;
  readonly db: {
    /** As the drivers read it: a PostgreSQL URL's sslmode in libpq form (pgDriverUrl). */
    readonly url: string;
    /** Native row-level security (PostgreSQL only). */
    readonly rls: boolean;
    /**
     * Longest a statement may run before the database cancels it (503 `query_timeout`); 0 = no
     * limit. Absent (a hand-built config): DEFAULT_STATEMENT_TIMEOUT_MS. SQLite cannot enforce it.
     */
    readonly statementTimeoutMs?: number;
    /**
     * `-db.pooler transaction`: `url` reaches PostgreSQL through a transaction-mode pooler (PgBouncer,
     * Supavisor, RDS Proxy): no named prepared statements, no session state, every setting inside
     * its request's transaction. Absent: a direct connection (or a session-mode pooler).
     */
    readonly pooler?: 'transaction';
    /**
     * `-db.listen_url`: a direct connection (not through a transaction pooler) for what needs a
     * session of its own: LISTEN and the migrations of `rest auth setup`.
     */
    readonly listenUrl?: string;
    /**
     * Most requests that may wait for a database connection; one more is 503 `overloaded` at once
     * (PostgreSQL, MariaDB). Absent: the adapters' DEFAULT_MAX_WAITING (256).
     */
    readonly maxWaiting?: number;
  };
  /** `-workers`: server processes sharing the listen address (node:cluster); absent: 1. */
  readonly workers?: number;
  readonly auth: {
    /** Exactly when a secret is configured. */
    readonly enabled: boolean;
    /**
     * `auth.enabled=false` was given: serve without auth even where setup ran (docs/operations.md "Fail
     * closed"); without it, a server with no secret refuses a database that has `auth_users`.
     */
    readonly disabledExplicitly?: boolean;
    readonly secret: string | null;
    readonly tokenTtlSeconds: number;
    /** Lifetime of a session's refresh token (`-auth.refresh_ttl`); absent: 30 days. */
    readonly refreshTtlSeconds?: number;
  };
  readonly cors: CorsConfig;
  readonly http: {
    /** `-http.trust_proxy`: count a client under the address its proxy forwarded (X-Forwarded-For). */
    readonly trustProxy: boolean;
    /** Most rows in one `POST` array (413 `too_many_rows`). */
    readonly maxRows: number;
    /** `-http.console`: the policy console at `/_/` (docs/console.md); absent: on. */
    readonly console?: boolean;
  };
}

/**
 * The URL of a session of its own (LISTEN, migrations): `-db.listen_url`, else `-db.url` unless
 * that goes through a transaction pooler (undefined: changes are polled, migrations refused).
 */
export const sessionUrlOf = (db: Config['db']): string | undefined =>
  db.listenUrl ?? (db.pooler === 'transaction' ? undefined : db.url);

export const DEFAULT_DB_URL = 'sqlite://./rest.db';
export const DEFAULT_ADDR = ':3000';
export const DEFAULT_TOKEN_TTL_SECONDS = 24 * 60 * 60;
export const DEFAULT_REFRESH_TTL_SECONDS = 30 * 24 * 60 * 60;
export const DEFAULT_MAX_ROWS = 1000;
export const DEFAULT_STATEMENT_TIMEOUT_MS = 10_000;
/** HS256 needs at least 256 bits of key (RFC 7518 §3.2). */
export const MIN_SECRET_BYTES = 32;
