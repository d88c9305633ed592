// Sessions, refresh and revocation (docs/authentication.md) over real HTTP on every database: login opens
// a session, refresh rotates with reuse detection, logout / "log out everywhere" / a password
// change / an admin's change / deletion end sessions — on this server and, within 2 s, on a second
// server process of the same database — while another system's tokens stay stateless.

import { decodeJwt } from 'jose';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { client, type Client } from '../../support/http.js';
import { startTestServer, type TestServer } from '../../support/server.js';
import { serverIt } from '../../support/server-only.js';
import { expectError } from './matrix.js';
import { bearer, forEachAuthDatabase, type PolicyContext } from './policy-support.js';

interface Pair {
  readonly token: string;
  readonly refresh_token: string;
}

async function login(http: Client, username: string, password: string): Promise<Pair> {
  const reply = await http.post('/auth/login', { username, password });
  expect(reply.status, reply.text).toBe(200);
  return reply.json as Pair;
}

let seq = 0;
/** A fresh user of this test alone (its sessions and lock-outs touch nobody else). */
async function newUser(ctx: PolicyContext): Promise<{ id: number; username: string; password: string }> {
  seq += 1;
  const username = `sess${seq}_${Math.random().toString(36).slice(2, 8)}`;
  const password = `pw-${username}-long`;
  const reply = await ctx.http.post('/auth/register', { username, password });
  expect(reply.status, reply.text).toBe(201);
  return { id: (reply.json as { id: number }).id, username, password };
}

/** Polls `probe` until it answers `status` or 2 s have passed (docs/authentication.md: within 2 s). */
async function within2s(probe: () => Promise<{ status: number }>, status: number): Promise<number> {
  const deadline = Date.now() + 2000;
  for (;;) {
    const { status: got } = await probe();
    if (got === status || Date.now() > deadline) return got;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A row visible only to admins; a built-in user's request reads it with its session's rights. */
const me = (http: Client, token: string) => http.get('/auth_policies?page_size=1', bearer(token));

forEachAuthDatabase('sessions', (ctx, kind) => {
  // The other server hears of a change by NOTIFY, which PGlite does not deliver across connections.
  const acrossServers = serverIt(kind);
  let second: TestServer | undefined;
  let other: Client;
  beforeAll(async () => {
    // A second server process on the same database, with its own pool and caches.
    second = await startTestServer(ctx().config);
    other = client(second.url);
  });
  afterAll(async () => {
    await second?.handle.close();
  });

  it('login answers a refresh token and an access token bound to a session; neither is stored in clear', async () => {
    const user = await newUser(ctx());
    const pair = await login(ctx().http, user.username, user.password);
    expect(pair.refresh_token).toMatch(/^[A-Za-z0-9_-]{43,}$/);
    const claims = decodeJwt(pair.token);
    expect(typeof claims['sid']).toBe('string');
    expect(claims['user_id']).toBe(user.id);
    const sessions = await ctx().sql.rows(`SELECT * FROM auth_sessions WHERE user_id = ${user.id}`);
    expect(sessions).toHaveLength(1);
    const tokens = await ctx().sql.rows('SELECT * FROM auth_refresh_tokens');
    const stored = JSON.stringify([sessions, tokens]);
    expect(stored).not.toContain(pair.refresh_token);
    expect(stored).not.toContain(pair.token);
  });

  const reuse =
    'refresh rotates; the old refresh token presented again revokes the whole session, everywhere';
  acrossServers(reuse, async () => {
    const { http } = ctx();
    const user = await newUser(ctx());
    const first = await login(http, user.username, user.password);
    const refreshed = await http.post('/auth/refresh', { refresh_token: first.refresh_token });
    expect(refreshed.status, refreshed.text).toBe(200);
    const second = refreshed.json as Pair & { token_type: string; expires_in: number };
    expect(second.token_type).toBe('Bearer');
    expect(second.expires_in).toBeGreaterThan(0);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(decodeJwt(second.token)['sid']).toBe(decodeJwt(first.token)['sid']);
    expect((await http.get('/notes', bearer(second.token))).status).toBe(200);
    expect((await other.get('/notes', bearer(second.token))).status).toBe(200);

    // Reuse: treated as theft.
    const reused = await http.post('/auth/refresh', { refresh_token: first.refresh_token });
    expectError(reused, 401, 'invalid_token');
    expect(reused.json).toMatchObject({ error: { message: expect.stringContaining('already used') } });
    expectError(
      await http.post('/auth/refresh', { refresh_token: second.refresh_token }),
      401,
      'invalid_token',
    );
    const refused = await http.get('/notes', bearer(second.token));
    expectError(refused, 401, 'invalid_token');
    expect(refused.headers.get('www-authenticate')).toContain('session has been revoked');
    expect(await within2s(() => other.get('/notes', bearer(second.token)), 401)).toBe(401);
  });

  it('a refresh token past -auth.refresh_ttl is 401, and a refresh restarts its lifetime', async () => {
    const { config } = ctx();
    // A server of the same database whose sessions' refresh tokens live a minute, on a session
    // clock this test moves on instead of waiting (StartOptions.sessionClock): the server still
    // dates and judges each session, through the database, as it does with Date.now.
    let ahead = 0;
    const short = await startTestServer(
      { ...config, auth: { ...config.auth, refreshTtlSeconds: 60 } },
      { sessionClock: { now: () => Date.now() + ahead } },
    );
    try {
      const http = client(short.url);
      const user = await newUser(ctx());
      const pair = await login(http, user.username, user.password);
      ahead += 40_000;
      const renewed = await http.post('/auth/refresh', { refresh_token: pair.refresh_token });
      expect(renewed.status, renewed.text).toBe(200);
      ahead += 40_000;
      // 80 s after login, 40 s after the refresh: the renewed token still works.
      const again = await http.post('/auth/refresh', { refresh_token: (renewed.json as Pair).refresh_token });
      expect(again.status, again.text).toBe(200);
      ahead += 61_000;
      const expired = await http.post('/auth/refresh', { refresh_token: (again.json as Pair).refresh_token });
      expectError(expired, 401, 'invalid_token');
    } finally {
      await short.handle.close();
    }
  });

  it('refresh without a token is 400; an unknown one is 401', async () => {
    const { http } = ctx();
    expectError(await http.post('/auth/refresh', {}), 400, 'invalid_body');
    expectError(await http.post('/auth/refresh', { refresh_token: 42 }), 400, 'invalid_body');
    expectError(await http.post('/auth/refresh', { refresh_token: 'not-a-token' }), 401, 'invalid_token');
  });

  it('logout with a refresh token ends that session only; without one it changes nothing', async () => {
    const { http } = ctx();
    const user = await newUser(ctx());
    const a = await login(http, user.username, user.password);
    const b = await login(http, user.username, user.password);
    expect((await http.post('/auth/logout', undefined, bearer(a.token))).status).toBe(200);
    expect((await http.get('/notes', bearer(a.token))).status).toBe(200);

    expect(
      (await http.post('/auth/logout', { refresh_token: a.refresh_token }, bearer(a.token))).status,
    ).toBe(200);
    expectError(await http.post('/auth/refresh', { refresh_token: a.refresh_token }), 401, 'invalid_token');
    expectError(await http.get('/notes', bearer(a.token)), 401, 'invalid_token');
    expect(await within2s(() => other.get('/notes', bearer(a.token)), 401)).toBe(401);
    expect((await http.get('/notes', bearer(b.token))).status).toBe(200);
    expect((await http.post('/auth/refresh', { refresh_token: b.refresh_token })).status).toBe(200);
  });

  const revokeAll = 'sessions/revoke logs the caller out everywhere; another system’s token stays stateless';
  acrossServers(revokeAll, async () => {
    const { http, mint } = ctx();
    const user = await newUser(ctx());
    const a = await login(http, user.username, user.password);
    const b = await login(http, user.username, user.password);
    const external = await mint({ user_id: user.id });
    expect((await other.get('/notes', bearer(b.token))).status).toBe(200);

    const revoked = await http.post('/auth/sessions/revoke', undefined, bearer(a.token));
    expect(revoked.status, revoked.text).toBe(200);
    expect(revoked.json).toEqual({ revoked: 2 });
    for (const token of [a.token, b.token])
      expectError(await http.get('/notes', bearer(token)), 401, 'invalid_token');
    expect(await within2s(() => other.get('/notes', bearer(b.token)), 401)).toBe(401);
    expectError(await http.post('/auth/refresh', { refresh_token: b.refresh_token }), 401, 'invalid_token');
    expect((await http.get('/notes', bearer(external))).status).toBe(200);
    expectError(await http.post('/auth/sessions/revoke', undefined), 401, 'unauthenticated');
  });

  it('a password change needs the current password (failures count as failed logins) and ends the other sessions', async () => {
    const { http } = ctx();
    const user = await newUser(ctx());
    const mine = await login(http, user.username, user.password);
    const elsewhere = await login(http, user.username, user.password);
    const change = (current: string, next: string) =>
      http.post('/auth/password', { current_password: current, new_password: next }, bearer(mine.token));

    expectError(
      await http.post('/auth/password', { current_password: user.password, new_password: 'x-long-password' }),
      401,
      'unauthenticated',
    );
    expectError(await change(user.password, 'short'), 400, 'invalid_password');
    expectError(
      await http.post(
        '/auth/password',
        { current_password: user.password, new_password: 'a-long-one!', is_admin: true },
        bearer(mine.token),
      ),
      400,
      'invalid_body',
    );
    expectError(await change('wrong-password', 'a-new-long-password'), 401, 'invalid_credentials');

    const next = `${user.password}-2`;
    const ok = await change(user.password, next);
    expect(ok.status, ok.text).toBe(200);
    expect((await http.get('/notes', bearer(mine.token))).status).toBe(200);
    expectError(await http.get('/notes', bearer(elsewhere.token)), 401, 'invalid_token');
    expect(await within2s(() => other.get('/notes', bearer(elsewhere.token)), 401)).toBe(401);
    expect((await other.get('/notes', bearer(mine.token))).status).toBe(200);
    expectError(
      await http.post('/auth/login', { username: user.username, password: user.password }),
      401,
      'invalid_credentials',
    );
    await login(http, user.username, next);

    // Wrong current passwords are failed logins of this user from this address: 5, then 429.
    for (let i = 0; i < 5; i++)
      expectError(await change('wrong-password', 'a-new-long-password'), 401, 'invalid_credentials');
    const throttled = await change(next, 'a-new-long-password');
    expectError(throttled, 429, 'too_many_attempts');
    expect(throttled.headers.get('retry-after')).toMatch(/^[0-9]+$/);
  });

  const adminChange =
    'an admin changing is_admin or the password through /auth_users, or deleting the user, ends their sessions';
  acrossServers(adminChange, async () => {
    const { http, admin } = ctx();
    for (const change of [{ is_admin: true }, { password: 'set-by-the-admin' }, 'delete'] as const) {
      const user = await newUser(ctx());
      const pair = await login(http, user.username, user.password);
      expect((await other.get('/notes', bearer(pair.token))).status).toBe(200);
      const reply =
        change === 'delete'
          ? await http.delete(`/auth_users/${user.id}`, admin.auth)
          : await http.patch(`/auth_users/${user.id}`, change, admin.auth);
      expect(reply.status, reply.text).toBe(200);
      expectError(await http.get('/notes', bearer(pair.token)), 401, 'invalid_token');
      expect(await within2s(() => other.get('/notes', bearer(pair.token)), 401)).toBe(401);
      expectError(
        await http.post('/auth/refresh', { refresh_token: pair.refresh_token }),
        401,
        'invalid_token',
      );
    }
  });

  const changedByHand =
    'is_admin and username of a session come from the stored user: a change made in the database counts within 2 s';
  acrossServers(changedByHand, async () => {
    const { http, sql } = ctx();
    const user = await newUser(ctx());
    const pair = await login(http, user.username, user.password);
    expectError(await me(http, pair.token), 403, 'forbidden');
    // Promoted by hand (psql, another tool): the stamp moves, the session ends, a new login is admin.
    await sql.exec(
      `UPDATE auth_users SET is_admin = ${ctx().kind === 'sqlite' ? 1 : 'true'} WHERE id = ${user.id}`,
    );
    expect(await within2s(() => other.get('/notes', bearer(pair.token)), 401)).toBe(401);
    expect(await within2s(() => http.get('/notes', bearer(pair.token)), 401)).toBe(401);
    const promoted = await login(http, user.username, user.password);
    expect((await me(other, promoted.token)).status).toBe(200);
    await sql.exec(
      `UPDATE auth_users SET is_admin = ${ctx().kind === 'sqlite' ? 0 : 'false'} WHERE id = ${user.id}`,
    );
    expect(await within2s(() => me(other, promoted.token), 401)).toBe(401);
    expect(await within2s(() => me(http, promoted.token), 401)).toBe(401);
  });

  it('never serves its session tables', async () => {
    const { http, admin } = ctx();
    for (const table of ['auth_sessions', 'auth_refresh_tokens', 'auth_login_throttle']) {
      expectError(await http.get(`/${table}`, admin.auth), 404, 'unknown_table');
      expectError(await http.post(`/${table}`, { user_id: admin.id }, admin.auth), 404, 'unknown_table');
    }
  });
});
