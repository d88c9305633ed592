// Accounts of `auth_users`: request-body shape, register, login check and listing — the one code
// path the HTTP routes (`/auth/register`, `/auth/login`) and the CLI (`auth user add|list`) share.

import type { Dialect } from '../../compiler/sql/dialect.js';
import { SqlBuilder, renderSql } from '../../compiler/sql/fragment.js';
import { RestError, isRestError } from '../../errors/rest-error.js';
import type { DbAdapter, DbSession, Row } from '../db/adapter.js';
import { AUTH_USERS_TABLE, USERNAME_KEY_COLUMN } from './auth-ddl.js';
import { createPasswordHasher, validatePassword } from './passwords.js';
import type { PasswordHasher } from './passwords.js';
import { throttledCheck, type LoginRateLimiter } from './rate-limiter.js';
import { isTrue, userStamp } from './sessions.js';
import { normalizeUsername, usernameKey } from './usernames.js';

export interface Credentials {
  readonly username: string;
  readonly password: string;
}

export interface NewUser extends Credentials {
  readonly is_admin?: boolean;
}

/** A user as any caller may see it: never the password hash, never the uniqueness key. */
export interface PublicUser {
  readonly id: number;
  readonly username: string;
  readonly is_admin: boolean;
}

/** A user who just proved their password, with the stamp their session is bound to (sessions.ts). */
export interface AuthenticatedUser extends PublicUser {
  readonly stamp: string;
}

export interface UserServiceOptions {
  readonly hasher?: PasswordHasher | undefined;
}

export interface AuthenticateOptions extends UserServiceOptions {
  readonly limiter: LoginRateLimiter;
  readonly clientAddress: string;
}

let defaultHasher: PasswordHasher | undefined;
/** The hasher given, or one bcrypt hasher shared by every caller that gives none. */
export const hasherOf = (options: UserServiceOptions): PasswordHasher =>
  options.hasher ?? (defaultHasher ??= createPasswordHasher());

const invalidBody = (message: string, details: Readonly<Record<string, unknown>>): RestError =>
  new RestError('invalid_body', message, { details });

/**
 * An auth endpoint's body: a JSON object with exactly `fields`, each a string (400 `invalid_body`
 * naming the field otherwise). Any other field (e.g. `is_admin`) is refused rather than ignored.
 */
export function stringFields<K extends string>(
  body: unknown,
  fields: readonly K[],
): Readonly<Record<K, string>> {
  const names = fields.map((f) => `"${f}"`).join(' and ');
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw invalidBody(`the body must be a JSON object with ${names}`, {});
  }
  const record = body as Readonly<Record<string, unknown>>;
  const extra = Object.keys(record).find((k) => !(fields as readonly string[]).includes(k));
  if (extra !== undefined) {
    throw invalidBody(
      `unexpected field "${extra}": only ${names} ${fields.length === 1 ? 'is' : 'are'} accepted`,
      { field: extra },
    );
  }
  for (const field of fields) {
    if (typeof record[field] !== 'string')
      throw invalidBody(`"${field}" is required and must be a string`, { field });
  }
  return record as Readonly<Record<K, string>>;
}

/** The body of `/auth/register` and `/auth/login`: exactly `username` and `password`, both strings. */
export function parseCredentials(body: unknown): Credentials {
  const { username, password } = stringFields(body, ['username', 'password']);
  return { username, password };
}

/** The one 401 of a failed login, whatever failed. */
export const invalidCredentials = (): RestError =>
  new RestError('invalid_credentials', 'invalid username or password', {
    headers: { 'WWW-Authenticate': 'Bearer' },
  });

const publicUser = (row: Row): PublicUser => ({
  id: Number(row['id']),
  username: String(row['username']),
  is_admin: isTrue(row['is_admin']),
});

/** The column values of a new `auth_users` row: validated, normalised and hashed. */
export async function userColumns(
  input: NewUser,
  options: UserServiceOptions = {},
): Promise<Readonly<Record<string, unknown>>> {
  const { username, key } = normalizeUsername(input.username);
  validatePassword(input.password);
  if (input.is_admin !== undefined && typeof input.is_admin !== 'boolean') {
    throw new RestError('invalid_body', '"is_admin" must be true or false', {
      details: { field: 'is_admin' },
    });
  }
  return {
    username,
    password: await hasherOf(options).hashPassword(input.password),
    is_admin: input.is_admin ?? false,
    [USERNAME_KEY_COLUMN]: key,
  };
}

/** `a, b, c` with each name quoted. */
function appendColumns(builder: SqlBuilder, names: readonly string[]): SqlBuilder {
  names.forEach((name, i) => builder.append(i === 0 ? '' : ', ').appendIdent(name));
  return builder;
}

/**
 * Inserts a row made by `userColumns` inside the caller's transaction and reads it back by its
 * key (portable: PostgreSQL has no insertId, MySQL no RETURNING); a taken username → 409.
 */
export async function insertUser(
  session: DbSession,
  dialect: Dialect,
  columns: Readonly<Record<string, unknown>>,
): Promise<PublicUser> {
  const names = Object.keys(columns);
  const insert = appendColumns(
    new SqlBuilder(dialect).append('INSERT INTO ').appendIdent(AUTH_USERS_TABLE).append(' ('),
    names,
  );
  insert.append(') VALUES (');
  names.forEach((name, i) => insert.append(i === 0 ? '' : ', ').appendValue(columns[name]));
  insert.append(')');
  try {
    await session.query(renderSql(dialect, insert.build()));
  } catch (e) {
    if (isRestError(e) && e.code === 'unique_violation') {
      throw new RestError('username_taken', 'this username is already taken', {
        details: { field: 'username' },
        cause: e,
      });
    }
    throw e;
  }
  const found = await findByKey(session, dialect, String(columns[USERNAME_KEY_COLUMN]));
  if (found === undefined) throw new Error('the inserted user was not found again');
  return publicUser(found);
}

const PUBLIC_COLUMNS = ['id', 'username', 'is_admin'] as const;

async function findByKey(session: DbSession, dialect: Dialect, key: string): Promise<Row | undefined> {
  const select = appendColumns(new SqlBuilder(dialect).append('SELECT '), [...PUBLIC_COLUMNS, 'password'])
    .append(' FROM ')
    .appendIdent(AUTH_USERS_TABLE)
    .append(' WHERE ')
    .appendIdent(USERNAME_KEY_COLUMN)
    .append(' = ')
    .appendValue(key);
  const { rows } = await session.query(renderSql(dialect, select.build()));
  return rows[0];
}

/** Register (docs/authentication.md) and `auth user add`: validated like each other; taken → 409 `username_taken`. */
export async function registerUser(
  adapter: DbAdapter,
  input: NewUser,
  options: UserServiceOptions = {},
): Promise<{ readonly id: number; readonly username: string }> {
  const columns = await userColumns(input, options);
  const user = await adapter.transaction((tx) => insertUser(tx, adapter.dialect, columns));
  return { id: user.id, username: user.username };
}

/** The uniqueness key of a valid username; undefined for one that breaks the rules. */
function validUsernameKey(username: string): string | undefined {
  try {
    return normalizeUsername(username).key;
  } catch (e) {
    if (isRestError(e)) return undefined;
    throw e;
  }
}

/**
 * Login check: the user without its hash, or the uniform 401 `invalid_credentials`. An unknown
 * user, a wrong password and a password that breaks the rules (e.g. 73 bytes) all cost one
 * bcrypt comparison. Each attempt is reserved with the rate limiter before the comparison (429
 * when over a limit) and counted as a failure only when the credentials are wrong.
 */
export async function authenticateUser(
  adapter: DbAdapter,
  credentials: Credentials,
  options: AuthenticateOptions,
): Promise<AuthenticatedUser> {
  const key = validUsernameKey(credentials.username);
  let row: Row | undefined;
  const attempt = await throttledCheck(
    options.limiter,
    // An invalid name cannot exist, but its failures still count (on its folded form).
    { usernameKey: key ?? usernameKey(credentials.username), address: options.clientAddress },
    async () => {
      row = key === undefined ? undefined : await findByKey(adapter, adapter.dialect, key);
      const hash = row === undefined ? null : String(row['password']);
      return (await hasherOf(options).verifyPassword(credentials.password, hash)) && row !== undefined;
    },
    invalidCredentials,
  );
  await attempt.succeeded();
  if (row === undefined) throw invalidCredentials();
  const user = publicUser(row);
  return { ...user, stamp: userStamp(String(row['password']), user.is_admin) };
}

/** Every user with id, username and is_admin (never the hash), by id. */
export async function listUsers(adapter: DbAdapter): Promise<readonly PublicUser[]> {
  const select = appendColumns(new SqlBuilder(adapter.dialect).append('SELECT '), PUBLIC_COLUMNS)
    .append(' FROM ')
    .appendIdent(AUTH_USERS_TABLE)
    .append(' ORDER BY ')
    .appendIdent('id');
  const { rows } = await adapter.query(renderSql(adapter.dialect, select.build()));
  return rows.map(publicUser);
}
