// Auth setup (docs/authentication.md): creates the auth tables, inserts the three default policies and one admin
// with a random password shown once. Runs once, also when ten setups race each other. Also the
// upgrade of a database set up by an older version (tables added since, rows untouched).

import { SqlBuilder, renderSql } from '../../compiler/sql/fragment.js';
import { RestError, assertNever, isRestError } from '../../errors/rest-error.js';
import { sessionUrlOf, type Config } from '../config.js';
import type { DbAdapter } from '../db/adapter.js';
import { parseDbUrl } from '../db/parse-db-url.js';
import {
  AUTH_POLICIES_TABLE,
  AUTH_USERS_TABLE,
  POLICY_COLUMNS_COLUMN,
  portableAuthDdl,
  portablePolicyColumnsDdl,
  portableSessionsDdl,
  portableThrottleDdl,
} from './auth-ddl.js';
import type { PortableDialect } from './auth-ddl.js';
import { generatePassword } from './passwords.js';
import { insertUser, userColumns } from './users.js';
import type { UserServiceOptions } from './users.js';

export const ADMIN_USERNAME = 'admin';

export interface DefaultPolicy {
  readonly table_name: string;
  readonly action: string;
  readonly expression: string;
  readonly description: string;
}

/** The three rows of docs/authentication.md, in its order. */
export const DEFAULT_POLICIES: readonly DefaultPolicy[] = Object.freeze([
  {
    table_name: 'auth_users',
    action: 'all',
    expression: 'auth_user.is_admin',
    description: 'users operations are limited to admin user',
  },
  {
    table_name: 'auth_policies',
    action: 'all',
    expression: 'auth_user.is_admin',
    description: 'policies operations are limited to admin user',
  },
  {
    table_name: 'all',
    action: 'all',
    expression: 'user_id = auth_user.id',
    description: 'all tables/actions are limited to be filtered by user_id',
  },
]);

export interface SetupResult {
  readonly username: string;
  readonly password: string;
}

/**
 * The URL PostgreSQL's migrations run on: they hold session locks, which a transaction pooler would
 * leave on a backend other clients share, so through one only `-db.listen_url` will do.
 */
export function migrationUrlOf(config: Config): string {
  const url = sessionUrlOf(config.db);
  if (url !== undefined) return url;
  throw new RestError(
    'pooler_needs_listen_url',
    'setting up the auth tables on PostgreSQL holds session locks, which a transaction pooler does not keep: give -db.listen_url, a direct connection to the same database',
  );
}

export interface SetupOptions extends UserServiceOptions {
  /**
   * The URL `adapter` was opened with (docs/operations.md). PostgreSQL runs its migrations on a session of
   * their own (postgres-migrations holds a session lock), opened from this URL.
   */
  readonly dbUrl: string;
}

/**
 * Creates what is missing of the auth tables, `auth_login_throttle` and the session tables: PostgreSQL through the
 * migrations in `sql/` (postgres-migrations, which records them in its `migrations` table), the
 * others through `CREATE TABLE IF NOT EXISTS`. Safe to run concurrently and repeatedly.
 */
export async function createAuthTables(
  adapter: DbAdapter,
  options: Pick<SetupOptions, 'dbUrl'>,
): Promise<void> {
  await applyDdl(adapter, options.dbUrl, (kind) => [...portableAuthDdl[kind], ...addedSince(kind)]);
}

/**
 * Brings a database where setup ran with an older version up to date without touching its rows:
 * PostgreSQL applies the migrations of `sql/` not applied yet, the others create the tables added
 * since (`auth_login_throttle`, `auth_sessions`, `auth_refresh_tokens`) and add
 * `auth_policies.columns` (NULL in every stored row: every column). Run when a server starts with auth enabled; safe to run concurrently.
 */
export async function upgradeAuthTables(
  adapter: DbAdapter,
  options: Pick<SetupOptions, 'dbUrl'>,
): Promise<void> {
  await applyDdl(adapter, options.dbUrl, addedSince);
}

/** The auth tables added after the first version, in the order they came. */
const addedSince = (kind: PortableDialect): readonly string[] => [
  ...portableThrottleDdl[kind],
  ...portableSessionsDdl[kind],
];

async function applyDdl(
  adapter: DbAdapter,
  dbUrl: string,
  portable: (kind: PortableDialect) => readonly string[],
): Promise<void> {
  const { kind } = parseDbUrl(dbUrl);
  if (kind !== adapter.kind) {
    throw new RestError(
      'db_url_mismatch',
      `the database URL is for ${kind} but the adapter is for ${adapter.kind}`,
    );
  }
  switch (adapter.kind) {
    case 'postgres': {
      // postgres-migrations is loaded only by a setup or an upgrade on PostgreSQL.
      const { runPostgresMigrations } = await import('./pg-migrations.js');
      await runPostgresMigrations(dbUrl);
      return;
    }
    case 'mysql':
    case 'sqlite':
      for (const statement of portable(adapter.kind)) await adapter.exec(statement);
      await addPolicyColumns(adapter, adapter.kind);
      return;
    default:
      return assertNever(adapter.kind, 'database kind');
  }
}

/**
 * Adds `auth_policies.columns` where the table was created without it (MySQL/MariaDB and SQLite have
 * no `ADD COLUMN IF NOT EXISTS` in common): probed with a query that names it; when the ALTER fails
 * because a concurrent upgrade added the column first, the probe then succeeds and that is fine.
 */
async function addPolicyColumns(adapter: DbAdapter, kind: PortableDialect): Promise<void> {
  const probe = `SELECT ${POLICY_COLUMNS_COLUMN} FROM ${AUTH_POLICIES_TABLE} WHERE 1 = 0`;
  const present = (): Promise<boolean> =>
    adapter.exec(probe).then(
      () => true,
      () => false,
    );
  if (await present()) return;
  try {
    await adapter.exec(portablePolicyColumnsDdl[kind]);
  } catch (e) {
    if (!(await present())) throw e;
  }
}

const alreadySetup = (cause?: unknown): RestError =>
  new RestError('already_setup', 'auth is already set up', cause === undefined ? {} : { cause });

/** Asked of an account before setup: there are no accounts yet, and no table to hold them. */
export const notSetup = (cause?: unknown): RestError =>
  new RestError(
    'not_setup',
    'auth is not set up on this database: run `rest auth setup` (or POST /auth/setup) first',
    cause === undefined ? {} : { cause },
  );

/**
 * POST /auth/setup and `rest auth setup`. Auth counts as set up as soon as `auth_users` or
 * `auth_policies` holds a row. Concurrent setups are decided by the database: each inserts
 * `admin` first in its transaction, the UNIQUE key lets exactly one commit, every other one
 * fails (or sees the winner's rows) and rolls back → 409 `already_setup`, nothing changed.
 */
export async function setupAuth(adapter: DbAdapter, options: SetupOptions): Promise<SetupResult> {
  await createAuthTables(adapter, options);
  const password = generatePassword();
  const admin = await userColumns({ username: ADMIN_USERNAME, password, is_admin: true }, options);
  const { dialect } = adapter;
  await adapter.transaction(async (tx) => {
    // The insert comes first so that the row lock (or SQLite's write lock) is taken before any
    // read: a losing setup waits for the winner and then fails on the unique key.
    try {
      await insertUser(tx, dialect, admin);
    } catch (e) {
      if (isRestError(e) && e.code === 'username_taken') throw alreadySetup(e);
      throw e;
    }
    const count = new SqlBuilder(dialect)
      .append('SELECT (SELECT COUNT(*) FROM ')
      .appendIdent(AUTH_USERS_TABLE)
      .append(') AS ')
      .appendIdent('users')
      .append(', (SELECT COUNT(*) FROM ')
      .appendIdent(AUTH_POLICIES_TABLE)
      .append(') AS ')
      .appendIdent('policies');
    const [counts] = (await tx.query(renderSql(dialect, count.build()))).rows;
    if (Number(counts?.['users']) !== 1 || Number(counts?.['policies']) !== 0) throw alreadySetup();

    const insert = new SqlBuilder(dialect)
      .append('INSERT INTO ')
      .appendIdent(AUTH_POLICIES_TABLE)
      .append(' (');
    const columns = ['table_name', 'action', 'expression', 'description'] as const;
    columns.forEach((c, i) => insert.append(i === 0 ? '' : ', ').appendIdent(c));
    insert.append(') VALUES ');
    DEFAULT_POLICIES.forEach((policy, row) => {
      insert.append(row === 0 ? '(' : ', (');
      columns.forEach((c, i) => insert.append(i === 0 ? '' : ', ').appendValue(policy[c]));
      insert.append(')');
    });
    await tx.query(renderSql(dialect, insert.build()));
  });
  return { username: ADMIN_USERNAME, password };
}
