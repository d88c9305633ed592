// The session read (docs/authentication.md): the owner read with tokens of built-in users, which
// carry `sid` and are judged against the server's per-process cache of the stored user. Logging in
// a thousand users would cost a bcrypt each, so the users and their sessions are written straight
// into the auth tables after setup — one bcrypt hash shared by all, the `user_stamp` the server
// computes — and their tokens are minted with the bench's secret, with the claims a login issues.
// A probe proves the server judges them like login tokens: an unknown or revoked session gets 401.

import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import { userStamp } from '../runtime/auth/sessions.js';
import { usernameKey } from '../runtime/auth/usernames.js';
import { withPgClient } from './generate-data.js';
import type { ContenderId } from './report-model.js';
import { mintToken, type UserToken } from './workloads.js';

/** The rest contenders served the session read; the targets name the PostgreSQL ones. */
export const SESSION_CONTENDERS: readonly ContenderId[] = ['rest-pg-portable', 'rest-pg-rls', 'rest-sqlite'];

/** Lifetime of the sessions and their tokens: longer than any run. */
export const SESSION_TTL_SECONDS = 6 * 3600;

/** One built-in user of the bench with one live session. */
export interface SessionUser {
  readonly userId: number;
  readonly username: string;
  readonly sid: string;
}

/** The rows written for the session users (sql/001_auth_tables.sql, sql/004_sessions.sql). */
export interface SessionRows {
  readonly users: readonly {
    readonly id: number;
    readonly username: string;
    readonly username_key: string;
    readonly password: string;
    readonly is_admin: false;
  }[];
  readonly sessions: readonly {
    readonly id: string;
    readonly user_id: number;
    readonly user_stamp: string;
    readonly created_at: number;
    readonly expires_at: number;
  }[];
}

export const sessionUsername = (userId: number): string => `bench_reader_${userId}`;

/** 128 random bits, base64url, like the server's own session ids. */
export const newSessionId = (): string => randomBytes(16).toString('base64url');

/**
 * The owner read's users that can become built-in users: ids already taken in `auth_users` (the
 * admin that setup creates, id 1 on a fresh database) are left out, since a token's `user_id` must
 * be the stored user's id.
 */
export function sessionUserIds(ownerIds: readonly number[], taken: ReadonlySet<number>): readonly number[] {
  return ownerIds.filter((id) => !taken.has(id));
}

/** One session per user, plus `extra` more sessions for the probe (same users, other sids). */
export function sessionUsers(
  userIds: readonly number[],
  newSid: () => string = newSessionId,
): readonly SessionUser[] {
  return userIds.map((userId) => ({ userId, username: sessionUsername(userId), sid: newSid() }));
}

/**
 * The `auth_users` rows (each user once, sharing one bcrypt hash) and one `auth_sessions` row per
 * session, stamped `userStamp(hash, false)` as the server stamps a login's session.
 */
export function sessionRows(
  sessions: readonly SessionUser[],
  passwordHash: string,
  nowMs: number,
  ttlSeconds = SESSION_TTL_SECONDS,
): SessionRows {
  const stamp = userStamp(passwordHash, false);
  const seen = new Set<number>();
  const users: SessionRows['users'][number][] = [];
  for (const s of sessions) {
    if (seen.has(s.userId)) continue;
    seen.add(s.userId);
    users.push({
      id: s.userId,
      username: s.username,
      username_key: usernameKey(s.username),
      password: passwordHash,
      is_admin: false,
    });
  }
  return {
    users,
    sessions: sessions.map((s) => ({
      id: s.sid,
      user_id: s.userId,
      user_stamp: stamp,
      created_at: nowMs,
      expires_at: nowMs + ttlSeconds * 1000,
    })),
  };
}

/** The claims a login's access token carries (runtime/auth/tokens.ts `issue`), signed with the bench's secret. */
export function sessionClaims(s: SessionUser): Readonly<Record<string, unknown>> {
  return { sid: s.sid, username: s.username, is_admin: false };
}

export async function mintSessionTokens(
  secret: string,
  sessions: readonly SessionUser[],
): Promise<readonly UserToken[]> {
  return Promise.all(
    sessions.map(async (s) => ({
      userId: s.userId,
      token: await mintToken(secret, s.userId, SESSION_TTL_SECONDS, sessionClaims(s)),
    })),
  );
}

export async function takenUserIdsPostgres(url: string): Promise<ReadonlySet<number>> {
  const { rows } = await withPgClient(url, (c) => c.query<{ id: number }>('SELECT id FROM auth_users'));
  return new Set(rows.map((r) => Number(r.id)));
}

export function takenUserIdsSqlite(file: string): ReadonlySet<number> {
  const db = new Database(file, { readonly: true });
  try {
    return new Set((db.prepare('SELECT id FROM auth_users').all() as { id: number }[]).map((r) => r.id));
  } finally {
    db.close();
  }
}

/** Writes the rows after setup, then moves the id sequence past them (later registrations get fresh ids). */
export async function loadSessionsPostgres(url: string, rows: SessionRows): Promise<void> {
  await withPgClient(url, async (c) => {
    await c.query('BEGIN');
    try {
      await c.query(
        `INSERT INTO auth_users (id, username, password, is_admin, username_key)
         SELECT u.id, u.username, u.password, false, u.username_key
         FROM unnest($1::int[], $2::text[], $3::text[], $4::text[]) AS u(id, username, password, username_key)`,
        [
          rows.users.map((u) => u.id),
          rows.users.map((u) => u.username),
          rows.users.map((u) => u.password),
          rows.users.map((u) => u.username_key),
        ],
      );
      await c.query(
        `SELECT setval(pg_get_serial_sequence('auth_users', 'id'), (SELECT max(id) FROM auth_users))`,
      );
      await c.query(
        `INSERT INTO auth_sessions (id, user_id, user_stamp, created_at, expires_at, revoked_at)
         SELECT s.id, s.user_id, s.user_stamp, s.created_at, s.expires_at, NULL
         FROM unnest($1::text[], $2::int[], $3::text[], $4::bigint[], $5::bigint[])
           AS s(id, user_id, user_stamp, created_at, expires_at)`,
        [
          rows.sessions.map((s) => s.id),
          rows.sessions.map((s) => s.user_id),
          rows.sessions.map((s) => s.user_stamp),
          rows.sessions.map((s) => s.created_at),
          rows.sessions.map((s) => s.expires_at),
        ],
      );
      await c.query('COMMIT');
    } catch (e) {
      await c.query('ROLLBACK');
      throw e;
    }
    await c.query('ANALYZE auth_users, auth_sessions');
  });
}

/** The same rows in the SQLite file the server has open (WAL: the server keeps reading meanwhile). */
export function loadSessionsSqlite(file: string, rows: SessionRows): void {
  const db = new Database(file);
  try {
    db.pragma('busy_timeout = 10000');
    const user = db.prepare(
      'INSERT INTO auth_users (id, username, password, is_admin, username_key) VALUES (?, ?, ?, 0, ?)',
    );
    const session = db.prepare(
      'INSERT INTO auth_sessions (id, user_id, user_stamp, created_at, expires_at, revoked_at) VALUES (?, ?, ?, ?, ?, NULL)',
    );
    db.transaction(() => {
      for (const u of rows.users) user.run(u.id, u.username, u.password, u.username_key);
      for (const s of rows.sessions) session.run(s.id, s.user_id, s.user_stamp, s.created_at, s.expires_at);
    })();
  } finally {
    db.close();
  }
}

/** Revokes one session as logout does (the PostgreSQL trigger tells every server process). */
export async function revokeSessionPostgres(url: string, sid: string, nowMs: number): Promise<number> {
  const { rowCount } = await withPgClient(url, (c) =>
    c.query('UPDATE auth_sessions SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL', [sid, nowMs]),
  );
  return rowCount ?? 0;
}

export function revokeSessionSqlite(file: string, sid: string, nowMs: number): number {
  const db = new Database(file);
  try {
    db.pragma('busy_timeout = 10000');
    return db
      .prepare('UPDATE auth_sessions SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL')
      .run(nowMs, sid).changes;
  } finally {
    db.close();
  }
}

/** The claims of a JWT, unverified (the bench reads what a login issued). */
export function jwtClaims(token: string): Readonly<Record<string, unknown>> | undefined {
  const payload = token.split('.')[1];
  if (payload === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
