// Sessions of built-in users (docs/authentication.md): a login opens one, its access tokens carry its id
// (`sid`), its refresh token rotates with reuse detection, and every kind of revocation is a row
// change here — which other server processes hear of through runtime/auth/user-states.ts.
// Tables: sql/004_sessions.sql (PostgreSQL), auth-ddl.ts (MySQL/MariaDB, SQLite).

import { createHash, randomBytes } from 'node:crypto';
import { SqlBuilder, boundSql, renderSql } from '../../compiler/sql/fragment.js';
import type { DbAdapter, DbSession, Row } from '../db/adapter.js';

export interface SessionClock {
  /** Milliseconds since the epoch. */
  readonly now: () => number;
}

export interface SessionOptions extends Partial<SessionClock> {
  readonly refreshTtlSeconds: number;
}

/** What a user's sessions are bound to: who the user is, and the stored password and admin flag. */
export interface SessionSubject {
  readonly id: number;
  readonly username: string;
  readonly is_admin: boolean;
  /** `userStamp(password hash, is_admin)` as stored now. */
  readonly stamp: string;
}

export interface OpenedSession {
  readonly sid: string;
  readonly refreshToken: string;
  /** The user's oldest live sessions this login ended (over MAX_LIVE_SESSIONS). */
  readonly ended: number;
}

/** Live sessions one user may have: a new login ends the oldest beyond this (docs/authentication.md). */
export const MAX_LIVE_SESSIONS = 100;

/**
 * A digest of a user's password hash and admin flag. A session keeps the stamp it was made with;
 * when the user's stamp moves on (a new password or a changed is_admin, by whatever means — the
 * API, the CLI, psql) the session is over. Never the hash itself, never returned.
 */
export function userStamp(passwordHash: string, isAdmin: boolean): string {
  return createHash('sha256')
    .update(`${isAdmin ? 1 : 0}:${passwordHash}`)
    .digest('base64url');
}

/** Refresh tokens are stored only as this digest; 256 random bits need no salt or slow hash. */
const tokenDigest = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');
/** 128 random bits. */
const newSessionId = (): string => randomBytes(16).toString('base64url');
/** 256 random bits (docs/authentication.md: at least 256). */
const newRefreshToken = (): string => randomBytes(32).toString('base64url');

/** A boolean column as each driver returns it (MySQL: 0/1). */
export const isTrue = (value: unknown): boolean => value === true || value === 1 || value === '1';

const nowOf = (options: Partial<SessionClock>): number => (options.now ?? Date.now)();

async function issueRefreshToken(tx: DbSession, adapter: DbAdapter, sid: string): Promise<string> {
  const refreshToken = newRefreshToken();
  const sql = boundSql(adapter.dialect);
  await tx.query(
    sql`INSERT INTO auth_refresh_tokens (token_hash, session_id, used_at) VALUES (${tokenDigest(refreshToken)}, ${sid}, ${null})`,
  );
  return refreshToken;
}

/**
 * Opens a session for a user who just proved their password. The user's sessions that are over
 * (revoked or expired) are deleted afterwards, so the table holds about one row per live login.
 */
export async function openSession(
  adapter: DbAdapter,
  subject: SessionSubject,
  options: SessionOptions,
): Promise<OpenedSession> {
  const now = nowOf(options);
  const sid = newSessionId();
  const sql = boundSql(adapter.dialect);
  const { refreshToken, ended } = await adapter.transaction(async (tx) => {
    await tx.query(
      sql`INSERT INTO auth_sessions (id, user_id, user_stamp, created_at, expires_at, revoked_at) VALUES (${sid}, ${subject.id}, ${subject.stamp}, ${now}, ${now + options.refreshTtlSeconds * 1000}, ${null})`,
    );
    const token = await issueRefreshToken(tx, adapter, sid);
    return { refreshToken: token, ended: await endOldestSessions(tx, adapter, subject.id, sid, now) };
  });
  await deleteEndedSessions(adapter, subject.id, now);
  return { sid, refreshToken, ended };
}

/**
 * Revokes the user's live sessions beyond the newest MAX_LIVE_SESSIONS (`keep`, the new one, always
 * stays), by key like every write here; returns how many it ended.
 */
async function endOldestSessions(
  tx: DbSession,
  adapter: DbAdapter,
  userId: number,
  keep: string,
  now: number,
): Promise<number> {
  const sql = boundSql(adapter.dialect);
  const { rows } = await tx.query(
    sql`SELECT id FROM auth_sessions WHERE user_id = ${userId} AND revoked_at IS NULL AND expires_at > ${now} ORDER BY created_at DESC, id DESC`,
  );
  const ids = rows.map((row) => String(row['id'])).filter((id) => id !== keep);
  const over = ids.slice(MAX_LIVE_SESSIONS - 1);
  for (const id of over) await tx.query(sql`UPDATE auth_sessions SET revoked_at = ${now} WHERE id = ${id}`);
  return over.length;
}

const CLEANUP_BATCH = 100;

/**
 * Deletes a user's ended sessions and their refresh tokens, by key: a range DELETE on `user_id`
 * would take InnoDB gap locks that deadlock concurrent logins of the user. Housekeeping only — a
 * failure leaves rows that are dead anyway, so it is not the login's error.
 */
async function deleteEndedSessions(adapter: DbAdapter, userId: number, now: number): Promise<void> {
  try {
    const sql = boundSql(adapter.dialect);
    const { rows } = await adapter.query(
      sql`SELECT id FROM auth_sessions WHERE user_id = ${userId} AND (revoked_at IS NOT NULL OR expires_at <= ${now})`,
    );
    for (const row of rows.slice(0, CLEANUP_BATCH)) {
      await adapter.transaction((tx) => deleteSession(tx, adapter, String(row['id'])));
    }
  } catch {
    // Left for the user's next login.
  }
}

/** A session and its refresh tokens (there are no foreign keys to do it: sql/004_sessions.sql). */
async function deleteSession(tx: DbSession, adapter: DbAdapter, sid: string): Promise<void> {
  const sql = boundSql(adapter.dialect);
  await tx.query(sql`DELETE FROM auth_refresh_tokens WHERE session_id = ${sid}`);
  await tx.query(sql`DELETE FROM auth_sessions WHERE id = ${sid}`);
}

/** Every session of a user and its refresh tokens, in the caller's transaction (the user is being removed). */
export async function deleteUserSessions(tx: DbSession, adapter: DbAdapter, userId: number): Promise<void> {
  const sql = boundSql(adapter.dialect);
  const { rows } = await tx.query(sql`SELECT id FROM auth_sessions WHERE user_id = ${userId}`);
  for (const row of rows) await deleteSession(tx, adapter, String(row['id']));
}

export type Rotation =
  | { readonly kind: 'rotated'; readonly user: SessionSubject; readonly session: OpenedSession }
  /** No such refresh token (never issued, or its session and user are gone). */
  | { readonly kind: 'unknown' }
  /** Its session is over: revoked, expired, or the user's password or admin flag changed. */
  | { readonly kind: 'revoked'; readonly userId: number }
  /** Presented after it was rotated: treated as stolen, the whole session is revoked now. */
  | { readonly kind: 'reused'; readonly userId: number };

const revokeSessionSql = (adapter: DbAdapter, sid: string, now: number) =>
  boundSql(
    adapter.dialect,
  )`UPDATE auth_sessions SET revoked_at = ${now} WHERE id = ${sid} AND revoked_at IS NULL`;

/**
 * `POST /auth/refresh`: exchanges a refresh token for a new one in the same session (its expiry
 * slides). The token is marked used by a conditional UPDATE, so of two requests racing with one
 * token exactly one rotates and the other counts as reuse (OAuth 2.0 Security BCP §4.14.2).
 */
export async function rotateRefreshToken(
  adapter: DbAdapter,
  refreshToken: string,
  options: SessionOptions,
): Promise<Rotation> {
  const now = nowOf(options);
  const digest = tokenDigest(refreshToken);
  const sql = boundSql(adapter.dialect);
  return adapter.transaction(async (tx): Promise<Rotation> => {
    const { rows } = await tx.query(
      sql`SELECT t.session_id, t.used_at, s.user_id, s.user_stamp, s.expires_at, s.revoked_at, u.username, u.is_admin, u.password FROM auth_refresh_tokens t JOIN auth_sessions s ON s.id = t.session_id JOIN auth_users u ON u.id = s.user_id WHERE t.token_hash = ${digest}`,
    );
    const row = rows[0];
    if (row === undefined) return { kind: 'unknown' };
    const sid = String(row['session_id']);
    const userId = Number(row['user_id']);
    const reused = async (): Promise<Rotation> => {
      await tx.query(revokeSessionSql(adapter, sid, now));
      return { kind: 'reused', userId };
    };
    if (row['used_at'] !== null) return reused();
    const user: SessionSubject = {
      id: userId,
      username: String(row['username']),
      is_admin: isTrue(row['is_admin']),
      stamp: userStamp(String(row['password']), isTrue(row['is_admin'])),
    };
    if (
      row['revoked_at'] !== null ||
      Number(row['expires_at']) <= now ||
      String(row['user_stamp']) !== user.stamp
    )
      return { kind: 'revoked', userId };
    const used = await tx.query(
      sql`UPDATE auth_refresh_tokens SET used_at = ${now} WHERE token_hash = ${digest} AND used_at IS NULL`,
    );
    if (used.rowCount !== 1) return reused();
    await tx.query(
      sql`UPDATE auth_sessions SET expires_at = ${now + options.refreshTtlSeconds * 1000} WHERE id = ${sid}`,
    );
    return {
      kind: 'rotated',
      user,
      session: { sid, refreshToken: await issueRefreshToken(tx, adapter, sid), ended: 0 },
    };
  });
}

/** `POST /auth/logout` with a refresh token: ends its session; the user's id, or undefined when unknown. */
export async function revokeByRefreshToken(
  adapter: DbAdapter,
  refreshToken: string,
  options: Partial<SessionClock> = {},
): Promise<number | undefined> {
  const sql = boundSql(adapter.dialect);
  return adapter.transaction(async (tx) => {
    const { rows } = await tx.query(
      sql`SELECT s.id, s.user_id FROM auth_refresh_tokens t JOIN auth_sessions s ON s.id = t.session_id WHERE t.token_hash = ${tokenDigest(refreshToken)}`,
    );
    const row: Row | undefined = rows[0];
    if (row === undefined) return undefined;
    await tx.query(revokeSessionSql(adapter, String(row['id']), nowOf(options)));
    return Number(row['user_id']);
  });
}

/**
 * Ends every live session of a user, but `exceptSid` when given (a password change keeps the
 * session that made it); returns how many ended. Runs in the caller's transaction.
 */
export async function revokeUserSessions(
  tx: DbSession,
  adapter: DbAdapter,
  userId: number,
  options: Partial<SessionClock> & { readonly exceptSid?: string } = {},
): Promise<number> {
  // No session id is empty: `id <> ''` keeps every session when none is excepted.
  const result = await tx.query(
    boundSql(
      adapter.dialect,
    )`UPDATE auth_sessions SET revoked_at = ${nowOf(options)} WHERE user_id = ${userId} AND revoked_at IS NULL AND id <> ${options.exceptSid ?? ''}`,
  );
  return result.rowCount;
}

/** After the session's own password change: it stays valid under the user's new stamp. */
export async function restampSession(
  tx: DbSession,
  adapter: DbAdapter,
  sid: string,
  stamp: string,
): Promise<void> {
  await tx.query(boundSql(adapter.dialect)`UPDATE auth_sessions SET user_stamp = ${stamp} WHERE id = ${sid}`);
}

/** A live session as the cache keeps it: the user stamp it was made with and its refresh expiry. */
export interface StoredSession {
  readonly stamp: string;
  readonly expiresAt: number;
}

/** A user's live sessions as the cache keeps them: sid → stamp and refresh expiry. */
export interface StoredUserState {
  readonly username: string;
  readonly isAdmin: boolean;
  readonly stamp: string;
  readonly sessions: ReadonlyMap<string, StoredSession>;
}

/** The stored state of these users (absent from the map: no such user). One statement. */
export async function loadUserStates(
  adapter: DbAdapter,
  userIds: readonly number[],
): Promise<ReadonlyMap<number, StoredUserState>> {
  if (userIds.length === 0) return new Map();
  const list = new SqlBuilder(adapter.dialect).append(
    'SELECT u.id, u.username, u.is_admin, u.password, s.id AS sid, s.user_stamp, s.expires_at FROM auth_users u LEFT JOIN auth_sessions s ON s.user_id = u.id AND s.revoked_at IS NULL WHERE u.id IN (',
  );
  userIds.forEach((id, i) => list.append(i === 0 ? '' : ', ').appendValue(id));
  list.append(')');
  const { rows } = await adapter.query(renderSql(adapter.dialect, list.build()));
  const states = new Map<number, StoredUserState & { readonly sessions: Map<string, StoredSession> }>();
  for (const row of rows) {
    const id = Number(row['id']);
    let state = states.get(id);
    if (state === undefined) {
      const isAdmin = isTrue(row['is_admin']);
      state = {
        username: String(row['username']),
        isAdmin,
        stamp: userStamp(String(row['password']), isAdmin),
        sessions: new Map(),
      };
      states.set(id, state);
    }
    if (row['sid'] !== null && row['sid'] !== undefined) {
      state.sessions.set(String(row['sid']), {
        stamp: String(row['user_stamp']),
        expiresAt: Number(row['expires_at']),
      });
    }
  }
  return states;
}
