// One user has at most MAX_LIVE_SESSIONS live sessions (docs/authentication.md): a new login ends the
// oldest, whose access token then answers 401 "session revoked" and whose refresh token stops
// working, on every database.

import { expect, it } from 'vitest';
import { MAX_LIVE_SESSIONS } from '../../../runtime/auth/sessions.js';
import { expectError } from './matrix.js';
import { bearer, forEachAuthDatabase } from './policy-support.js';

interface Pair {
  readonly token: string;
  readonly refresh_token: string;
}

forEachAuthDatabase('live sessions per user', (ctx) => {
  it(`a login past ${MAX_LIVE_SESSIONS} live sessions ends the oldest`, async () => {
    const { http, alice } = ctx();
    const login = async (): Promise<Pair> => {
      const reply = await http.post('/auth/login', { username: alice.username, password: alice.password });
      expect(reply.status, reply.text).toBe(200);
      return reply.json as Pair;
    };
    const oldest = await login();
    const second = await login();
    // The suite's own login of alice is one live session too.
    for (let i = 0; i < MAX_LIVE_SESSIONS - 2; i++) await login();
    expect((await http.get('/notes', bearer(oldest.token))).status).toBe(200);
    const newest = await login();
    const deadline = Date.now() + 2000;
    let status = 0;
    while (Date.now() < deadline) {
      status = (await http.get('/notes', bearer(oldest.token))).status;
      if (status === 401) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(status).toBe(401);
    expectError(await http.get('/notes', bearer(ctx().alice.token)), 401, 'invalid_token');
    const refresh = await http.post('/auth/refresh', { refresh_token: oldest.refresh_token });
    expect(refresh.status).toBe(401);
    expect((await http.get('/notes', bearer(second.token))).status).toBe(200);
    expect((await http.get('/notes', bearer(newest.token))).status).toBe(200);
    const live = await ctx().sql.rows(
      `SELECT COUNT(*) AS n FROM auth_sessions WHERE user_id = ${alice.id} AND revoked_at IS NULL`,
    );
    expect(Number(live[0]?.['n'])).toBe(MAX_LIVE_SESSIONS);
  });
});
