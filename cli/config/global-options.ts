// The flags every command accepts (docs/cli.md), as yargs options; values are validated by loadConfig.

import type { Options } from 'yargs';

export const GLOBAL_OPTIONS = {
  'db.url': {
    type: 'string',
    describe:
      'database URL: postgres://…, mysql://… or mariadb://…, sqlite://<path> [env REST_DB_URL] (default sqlite://./rest.db)',
  },
  addr: {
    type: 'string',
    describe: 'listen address host:port or :port; port 0 = any free port [env REST_ADDR] (default :3000)',
  },
  'auth.secret': {
    type: 'string',
    describe:
      'JWT HS256 secret, at least 32 bytes; auth is enabled exactly when one is set [env REST_AUTH_SECRET]',
  },
  'auth.enabled': {
    type: 'string',
    describe:
      'false switches auth off explicitly, needed to serve without a secret once auth setup has run [env REST_AUTH_ENABLED] (default: on exactly when a secret is set)',
  },
  'auth.token_ttl': {
    type: 'string',
    describe: 'lifetime of issued tokens, e.g. 24h, 90m, 3600s [env REST_AUTH_TOKEN_TTL] (default 24h)',
  },
  'auth.refresh_ttl': {
    type: 'string',
    describe:
      "lifetime of a session's refresh token, e.g. 30d, 12h [env REST_AUTH_REFRESH_TTL] (default 30d)",
  },
  'db.rls': {
    type: 'string',
    describe:
      'on: native row-level security (PostgreSQL); off: compiled WHERE predicates [env REST_DB_RLS] (default on for PostgreSQL)',
  },
  'db.statement_timeout': {
    type: 'string',
    describe:
      'longest a statement may run before it is cancelled (503 query_timeout), e.g. 10s, 500ms; 0 = no limit; not enforced on SQLite [env REST_DB_STATEMENT_TIMEOUT] (default 10s)',
  },
  'db.pooler': {
    type: 'string',
    describe:
      'transaction: -db.url goes through a transaction-mode pooler (PgBouncer, Supavisor, RDS Proxy); none: a direct connection [env REST_DB_POOLER] (default none)',
  },
  'db.listen_url': {
    type: 'string',
    describe:
      'a direct PostgreSQL URL for LISTEN and migrations when -db.url goes through a pooler; without it changes are polled [env REST_DB_LISTEN_URL]',
  },
  'db.max_waiting': {
    type: 'string',
    describe:
      'most requests that may wait for a database connection; more are refused at once (503 overloaded, Retry-After) [env REST_DB_MAX_WAITING] (default 256)',
  },
  'http.max_rows': {
    type: 'string',
    describe: 'most rows in one POST array (413 too_many_rows) [env REST_HTTP_MAX_ROWS] (default 1000)',
  },
  'http.trust_proxy': {
    type: 'string',
    describe:
      'on: rest runs behind one proxy; count a client by the last X-Forwarded-For address, not the connection [env REST_HTTP_TRUST_PROXY] (default off)',
  },
  'http.console': {
    type: 'string',
    describe: 'the policy console for admins at /_/ (on or off) [env REST_HTTP_CONSOLE] (default on)',
  },
  workers: {
    type: 'string',
    describe:
      'server processes sharing the listen address (node:cluster); each has its own database pool [env REST_WORKERS] (default 1)',
  },
  config: {
    type: 'string',
    describe:
      'YAML config file with addr, workers, db: {url, rls, statement_timeout, pooler, listen_url, max_waiting}, auth: {enabled, secret, token_ttl, refresh_ttl}, http: {max_rows, trust_proxy, console}, cors: {enabled, origins} [env REST_CONFIG]',
  },
} as const satisfies Readonly<Record<string, Options>>;

/** The global flags as yargs hands them to a command (absent when not given). */
export interface GlobalArgs {
  readonly 'db.url'?: string | undefined;
  readonly addr?: string | undefined;
  readonly 'auth.secret'?: string | undefined;
  readonly 'auth.enabled'?: string | undefined;
  readonly 'auth.token_ttl'?: string | undefined;
  readonly 'auth.refresh_ttl'?: string | undefined;
  readonly 'db.rls'?: string | undefined;
  readonly 'db.statement_timeout'?: string | undefined;
  readonly 'db.pooler'?: string | undefined;
  readonly 'db.listen_url'?: string | undefined;
  readonly 'db.max_waiting'?: string | undefined;
  readonly 'http.max_rows'?: string | undefined;
  readonly 'http.trust_proxy'?: string | undefined;
  readonly 'http.console'?: string | undefined;
  readonly workers?: string | undefined;
  readonly config?: string | undefined;
}
