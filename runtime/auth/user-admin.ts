// What an admin does to an account from the CLI (docs/operations.md, docs/authentication.md): remove it, set its password, grant
// or revoke admin, clear its login lock-outs, and list users with their lock-outs. Users are found
// by username like a login finds them (the case-insensitive key); each change ends the user's
// sessions in the transaction that makes it, and an unknown user changes nothing.

import { boundSql } from '../../compiler/sql/fragment.js';
import { quoteValue } from '../../errors/quote-value.js';
import { RestError } from '../../errors/rest-error.js';
import type { DbAdapter, DbSession } from '../db/adapter.js';
import { createPasswordHasher, validatePassword, type PasswordHasher } from './passwords.js';
import type { LoginLockouts, LoginRateLimiter } from './rate-limiter.js';
import { deleteUserSessions, isTrue, revokeUserSessions } from './sessions.js';
import { listUsers, type PublicUser } from './users.js';
import { usernameKey } from './usernames.js';

/** A user as `auth user list` shows it: locked when some client address is refused its logins. */
export interface ListedUser extends PublicUser {
  readonly locked: boolean;
  /** When the last lock-out ends (ISO 8601, UTC), or null. */
  readonly locked_until: string | null;
}

/** The account a change was made to, and how many of its live sessions it ended. */
export interface UserChange {
  readonly id: number;
  readonly username: string;
  readonly sessions_revoked: number;
}

export const unknownUser = (username: string): RestError =>
  new RestError('unknown_user', `user ${quoteValue(username)} does not exist`, {
    details: { username },
  });

/**
 * Runs `change` on the user named `username` (compared like a login compares it) in one
 * transaction, then ends the user's sessions in it; unknown → 404 `unknown_user`, nothing changed.
 */
function changeUser<T extends object>(
  adapter: DbAdapter,
  username: string,
  change: (tx: DbSession, user: PublicUser) => Promise<T>,
): Promise<UserChange & T> {
  const sql = boundSql(adapter.dialect);
  return adapter.transaction(async (tx) => {
    const { rows } = await tx.query(
      sql`SELECT id, username, is_admin FROM auth_users WHERE username_key = ${usernameKey(username)}`,
    );
    const row = rows[0];
    if (row === undefined) throw unknownUser(username);
    const user: PublicUser = {
      id: Number(row['id']),
      username: String(row['username']),
      is_admin: isTrue(row['is_admin']),
    };
    const revoked = await revokeUserSessions(tx, adapter, user.id);
    const result = await change(tx, user);
    return { id: user.id, username: user.username, sessions_revoked: revoked, ...result };
  });
}

/** `auth user remove`: deletes the user (their sessions with them). */
export function removeUser(adapter: DbAdapter, username: string): Promise<UserChange> {
  const sql = boundSql(adapter.dialect);
  return changeUser(adapter, username, async (tx, user) => {
    await deleteUserSessions(tx, adapter, user.id);
    await tx.query(sql`DELETE FROM auth_users WHERE id = ${user.id}`);
    return {};
  });
}

/** `auth user passwd`: validated like register (400 `invalid_password`), hashed before the transaction. */
export async function setUserPassword(
  adapter: DbAdapter,
  username: string,
  password: string,
  options: { readonly hasher?: PasswordHasher | undefined } = {},
): Promise<UserChange> {
  const hash = await (options.hasher ?? createPasswordHasher()).hashPassword(validatePassword(password));
  const sql = boundSql(adapter.dialect);
  return changeUser(adapter, username, async (tx, user) => {
    await tx.query(sql`UPDATE auth_users SET password = ${hash} WHERE id = ${user.id}`);
    return {};
  });
}

/** `auth user admin`: grants or revokes admin; `was_admin` says whether it changed anything. */
export function setUserAdmin(
  adapter: DbAdapter,
  username: string,
  isAdmin: boolean,
): Promise<UserChange & { readonly is_admin: boolean; readonly was_admin: boolean }> {
  const sql = boundSql(adapter.dialect);
  return changeUser(adapter, username, async (tx, user) => {
    await tx.query(sql`UPDATE auth_users SET is_admin = ${isAdmin} WHERE id = ${user.id}`);
    return { is_admin: isAdmin, was_admin: user.is_admin };
  });
}

/** `auth user unlock`: forgets the user's failed logins from every address (the limiter's unlock). */
export function unlockUser(
  adapter: DbAdapter,
  username: string,
  limiter: LoginRateLimiter,
): Promise<UserChange & { readonly throttle_rows_cleared: number }> {
  return changeUser(adapter, username, async (tx, user) => ({
    throttle_rows_cleared: await limiter.unlock(usernameKey(user.username), tx),
  }));
}

/** Every user with id, username, is_admin (never the hash) and whether logins are locked out, by id. */
export async function listUsersWithLockouts(
  adapter: DbAdapter,
  lockouts: LoginLockouts,
): Promise<readonly ListedUser[]> {
  return (await listUsers(adapter)).map((user) => {
    const until = lockouts.lockedUntil(usernameKey(user.username));
    return {
      ...user,
      locked: until !== undefined,
      locked_until: until === undefined ? null : new Date(until).toISOString(),
    };
  });
}
