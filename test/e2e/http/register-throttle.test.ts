// Registration is throttled per client address (docs/authentication.md): as many registrations as
// failed logins from one address per window, then 429 with Retry-After and nothing written.

import { expect, it } from 'vitest';
import { DEFAULT_LOGIN_LIMITS } from '../../../runtime/auth/rate-limiter.js';
import { forEachAuthDatabase } from './policy-support.js';

forEachAuthDatabase('registration throttle', (ctx) => {
  it('refuses registrations from one address past the limit, with Retry-After', async () => {
    const { http, sql } = ctx();
    // The suite registered alice and bob from this address already.
    const left = DEFAULT_LOGIN_LIMITS.perAddress - 2;
    for (let i = 0; i < left; i++) {
      const reply = await http.post('/auth/register', { username: `reg${i}`, password: 'password123' });
      expect(reply.status, reply.text).toBe(201);
    }
    const before = await sql.count('auth_users');
    const refused = await http.post('/auth/register', { username: 'one_too_many', password: 'password123' });
    expect(refused.status).toBe(429);
    expect((refused.json as { error: { code: string } }).error.code).toBe('too_many_attempts');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await sql.count('auth_users')).toBe(before);
    // Logging in from that address still works.
    const login = await http.post('/auth/login', {
      username: ctx().alice.username,
      password: ctx().alice.password,
    });
    expect(login.status).toBe(200);
  });
});
