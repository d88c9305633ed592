// `POST /auth/password` (docs/authentication.md): a built-in user changes their own password by proving
// the current one. A wrong current password is a failed login for the throttle; success ends the
// user's other sessions and keeps the one that asked.

import { boundSql } from '../../compiler/sql/fragment.js';
import { RestError } from '../../errors/rest-error.js';
import type { DbAdapter } from '../db/adapter.js';
import { validatePassword } from './passwords.js';
import { throttledCheck, type LoginRateLimiter } from './rate-limiter.js';
import { isTrue, restampSession, revokeUserSessions, userStamp } from './sessions.js';
import { hasherOf, stringFields, type UserServiceOptions } from './users.js';

export interface PasswordChange {
  readonly userId: number;
  /** The session of the token that asked; it survives the change. */
  readonly sid: string | undefined;
  readonly currentPassword: string;
  readonly newPassword: string;
}

export interface PasswordChangeDeps extends UserServiceOptions {
  readonly adapter: DbAdapter;
  readonly limiter: LoginRateLimiter;
  readonly clientAddress: string;
}

/** The body: exactly `current_password` and `new_password`, both strings (400 otherwise). */
export function parsePasswordChange(body: unknown): { readonly current: string; readonly next: string } {
  const fields = stringFields(body, ['current_password', 'new_password']);
  return { current: fields.current_password, next: fields.new_password };
}

const wrongPassword = (): RestError =>
  new RestError('invalid_credentials', 'the current password is wrong', {
    headers: { 'WWW-Authenticate': 'Bearer' },
  });

/** Changes the password; returns how many other sessions ended. */
export async function changeOwnPassword(change: PasswordChange, deps: PasswordChangeDeps): Promise<number> {
  const { adapter } = deps;
  const hasher = hasherOf(deps);
  try {
    validatePassword(change.newPassword);
  } catch (e) {
    // The rules name `password`; here the field is `new_password`.
    if (e instanceof RestError)
      throw new RestError(e.code, e.message, {
        category: e.category,
        details: { ...e.details, field: 'new_password' },
      });
    throw e;
  }
  const sql = boundSql(adapter.dialect);
  const { rows } = await adapter.query(
    sql`SELECT password, is_admin, username_key FROM auth_users WHERE id = ${change.userId}`,
  );
  const row = rows[0];
  const attempt = await throttledCheck(
    deps.limiter,
    {
      ...(row === undefined ? {} : { usernameKey: String(row['username_key']) }),
      address: deps.clientAddress,
    },
    async () =>
      (await hasher.verifyPassword(
        change.currentPassword,
        row === undefined ? null : String(row['password']),
      )) && row !== undefined,
    wrongPassword,
  );
  if (row === undefined) throw wrongPassword();
  let revoked: number;
  try {
    const hash = await hasher.hashPassword(change.newPassword);
    const stamp = userStamp(hash, isTrue(row['is_admin']));
    revoked = await adapter.transaction(async (tx) => {
      await tx.query(sql`UPDATE auth_users SET password = ${hash} WHERE id = ${change.userId}`);
      const ended = await revokeUserSessions(
        tx,
        adapter,
        change.userId,
        change.sid === undefined ? {} : { exceptSid: change.sid },
      );
      if (change.sid !== undefined) await restampSession(tx, adapter, change.sid, stamp);
      return ended;
    });
  } catch (e) {
    await attempt.abandoned();
    throw e;
  }
  await attempt.succeeded();
  return revoked;
}
