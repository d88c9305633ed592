// DDL of the auth tables (docs/authentication.md) and the login throttle for MySQL/MariaDB and SQLite; PostgreSQL
// gets the same tables from the versioned migrations in `sql/` (runtime/auth/pg-migrations.ts).

import type { DialectName } from '../../compiler/types.js';
import type { SchemaSnapshot } from '../db/adapter.js';

export const AUTH_USERS_TABLE = 'auth_users';
export const AUTH_POLICIES_TABLE = 'auth_policies';
/** Login failures per client address and per (username, address), shared by every server process. */
export const LOGIN_THROTTLE_TABLE = 'auth_login_throttle';
/** Sessions of built-in users and the digests of their refresh tokens (docs/authentication.md). */
export const SESSIONS_TABLE = 'auth_sessions';
export const REFRESH_TOKENS_TABLE = 'auth_refresh_tokens';

/**
 * Tables the server keeps for itself: never served by the table endpoints (404 as if absent),
 * whatever the policies say — a row of them is a lock-out counter or a credential.
 */
export const INTERNAL_TABLES: ReadonlySet<string> = new Set([
  LOGIN_THROTTLE_TABLE,
  SESSIONS_TABLE,
  REFRESH_TOKENS_TABLE,
]);

/**
 * Hidden column of `auth_users` holding `usernameKey(username)`; its UNIQUE constraint is what
 * makes usernames unique without regard to case on every database. Never returned.
 */
export const USERNAME_KEY_COLUMN = 'username_key';

export type PortableDialect = Exclude<DialectName, 'postgres'>;

export const portableAuthDdl: Readonly<Record<PortableDialect, readonly string[]>> = Object.freeze({
  // utf8mb4_bin: the default collations are case- and accent-insensitive (`Élise` = `elise`),
  // which would make the plain `username` UNIQUE wrong; the key is VARBINARY so that neither
  // collation nor PAD SPACE trailing-space equality takes part in the comparison
  // (https://mariadb.com/kb/en/varbinary/, https://dev.mysql.com/doc/refman/8.0/en/charset-binary-collations.html).
  mysql: Object.freeze([
    `CREATE TABLE IF NOT EXISTS auth_users (
  id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  username VARCHAR(32) NOT NULL,
  password VARCHAR(72) NOT NULL,
  is_admin BOOLEAN NOT NULL DEFAULT FALSE,
  username_key VARBINARY(512) NOT NULL,
  CONSTRAINT auth_users_username_unique UNIQUE (username),
  CONSTRAINT auth_users_username_key_unique UNIQUE (username_key)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
    `CREATE TABLE IF NOT EXISTS auth_policies (
  id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  description VARCHAR(256) NOT NULL,
  table_name VARCHAR(128) NOT NULL,
  action VARCHAR(16) NOT NULL,
  expression VARCHAR(128) NOT NULL,
  columns VARCHAR(256) NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin`,
  ]),
  // AUTOINCREMENT: a deleted user's id is never handed out again, so a new account cannot
  // inherit rows owned through `user_id` (https://www.sqlite.org/autoinc.html). SQLite ignores
  // varchar lengths, hence the CHECKs; length() counts characters of text.
  sqlite: Object.freeze([
    `CREATE TABLE IF NOT EXISTS auth_users (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  username VARCHAR(32) NOT NULL UNIQUE CHECK (length(username) BETWEEN 1 AND 32),
  password VARCHAR(72) NOT NULL CHECK (length(password) <= 72),
  is_admin BOOLEAN NOT NULL DEFAULT 0 CHECK (is_admin IN (0, 1)),
  username_key TEXT NOT NULL UNIQUE
)`,
    `CREATE TABLE IF NOT EXISTS auth_policies (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  description VARCHAR(256) NOT NULL CHECK (length(description) <= 256),
  table_name VARCHAR(128) NOT NULL CHECK (length(table_name) <= 128),
  action VARCHAR(16) NOT NULL CHECK (length(action) <= 16),
  expression VARCHAR(128) NOT NULL CHECK (length(expression) <= 128),
  columns VARCHAR(256) NULL CHECK (length(columns) <= 256)
)`,
  ]),
});

/**
 * `auth_login_throttle` (sql/003_login_throttle.sql explains its columns). Created by setup and,
 * on a database set up before it existed, when a server starts with auth enabled.
 */
export const portableThrottleDdl: Readonly<Record<PortableDialect, readonly string[]>> = Object.freeze({
  // VARBINARY keys compare byte by byte, like the "C" collation on PostgreSQL (see auth_users).
  mysql: Object.freeze([
    `CREATE TABLE IF NOT EXISTS auth_login_throttle (
  throttle_key VARBINARY(512) NOT NULL PRIMARY KEY,
  username_key VARBINARY(512) NULL,
  window_start BIGINT NOT NULL DEFAULT 0,
  failures INT NOT NULL DEFAULT 0,
  pending INT NOT NULL DEFAULT 0,
  pending_since BIGINT NOT NULL DEFAULT 0,
  KEY auth_login_throttle_username_key (username_key)
) ENGINE=InnoDB`,
  ]),
  sqlite: Object.freeze([
    `CREATE TABLE IF NOT EXISTS auth_login_throttle (
  throttle_key TEXT NOT NULL PRIMARY KEY,
  username_key TEXT,
  window_start INTEGER NOT NULL DEFAULT 0,
  failures INTEGER NOT NULL DEFAULT 0,
  pending INTEGER NOT NULL DEFAULT 0,
  pending_since INTEGER NOT NULL DEFAULT 0
)`,
    'CREATE INDEX IF NOT EXISTS auth_login_throttle_username_key ON auth_login_throttle (username_key)',
  ]),
});

/**
 * `auth_sessions` and `auth_refresh_tokens` (sql/004_sessions.sql explains their columns). Their
 * keys are base64url or hex text, compared byte by byte (ascii_bin on MySQL/MariaDB).
 */
export const portableSessionsDdl: Readonly<Record<PortableDialect, readonly string[]>> = Object.freeze({
  mysql: Object.freeze([
    `CREATE TABLE IF NOT EXISTS auth_sessions (
  id VARCHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
  user_id INT NOT NULL,
  user_stamp VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  revoked_at BIGINT NULL,
  KEY auth_sessions_user_id (user_id)
) ENGINE=InnoDB`,
    `CREATE TABLE IF NOT EXISTS auth_refresh_tokens (
  token_hash VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
  session_id VARCHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  used_at BIGINT NULL,
  KEY auth_refresh_tokens_session_id (session_id)
) ENGINE=InnoDB`,
  ]),
  sqlite: Object.freeze([
    `CREATE TABLE IF NOT EXISTS auth_sessions (
  id TEXT NOT NULL PRIMARY KEY,
  user_id INTEGER NOT NULL,
  user_stamp TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  revoked_at INTEGER
)`,
    'CREATE INDEX IF NOT EXISTS auth_sessions_user_id ON auth_sessions (user_id)',
    `CREATE TABLE IF NOT EXISTS auth_refresh_tokens (
  token_hash TEXT NOT NULL PRIMARY KEY,
  session_id TEXT NOT NULL,
  used_at INTEGER
)`,
    'CREATE INDEX IF NOT EXISTS auth_refresh_tokens_session_id ON auth_refresh_tokens (session_id)',
  ]),
});

/** `auth_policies.columns` (sql/005_policy_columns.sql), added in place to a table created without it. */
export const POLICY_COLUMNS_COLUMN = 'columns';

export const portablePolicyColumnsDdl: Readonly<Record<PortableDialect, string>> = Object.freeze({
  mysql: 'ALTER TABLE auth_policies ADD COLUMN columns VARCHAR(256) NULL',
  sqlite: 'ALTER TABLE auth_policies ADD COLUMN columns VARCHAR(256) NULL CHECK (length(columns) <= 256)',
});

/** Tables the auth setup gained after its first version. */
const ADDED_TABLES = [LOGIN_THROTTLE_TABLE, SESSIONS_TABLE, REFRESH_TOKENS_TABLE] as const;

/**
 * What a database where setup ran with an older version lacks of the auth tables, by name
 * (`auth_login_throttle`, `auth_policies.columns`…); empty when it is up to date or not set up.
 */
export function missingAuthParts(schema: SchemaSnapshot): readonly string[] {
  const policies = schema.tables.get(AUTH_POLICIES_TABLE);
  if (!schema.tables.has(AUTH_USERS_TABLE) || policies === undefined) return [];
  const tables = ADDED_TABLES.filter((t) => !schema.tables.has(t));
  const hasColumns = policies.columns.some((c) => c.name === POLICY_COLUMNS_COLUMN);
  return hasColumns ? tables : [...tables, `${AUTH_POLICIES_TABLE}.${POLICY_COLUMNS_COLUMN}`];
}
