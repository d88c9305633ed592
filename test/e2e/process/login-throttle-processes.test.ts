// Two `rest` processes on one database share the login counters (docs/authentication.md), on every database:
// failures made through one process are refused by the other, the owner still logs in from
// another address, and -http.trust_proxy (given as a flag) makes X-Forwarded-For the address.

import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/databases.js';
import { describeEachServer } from '../../support/each-database.js';
import { spawnRest, type RestProcess } from './rest-process.js';
import { newSecret } from '../../support/secret.js';

const secret = newSecret();

async function login(url: string, username: string, password: string, address: string): Promise<Response> {
  return fetch(`${url}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
    body: JSON.stringify({ username, password }),
  });
}

// Two processes on PGlite's one backend interleave their protocol messages: startup fails or hangs.
describeEachServer('login counters across processes', (kind) => {
  let db: TestDatabase;
  let processes: RestProcess[] = [];
  let urls: string[] = [];

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    const serve = (): RestProcess =>
      spawnRest([
        'serve',
        '-db.url',
        db.url,
        '-auth.secret',
        secret,
        '-addr',
        '127.0.0.1:0',
        '-http.trust_proxy',
        'on',
      ]);
    processes = [serve(), serve()];
    urls = await Promise.all(processes.map((p) => p.started()));
    expect((await fetch(`${urls[0]}/auth/setup`, { method: 'POST' })).status).toBe(201);
    const register = await fetch(`${urls[1]}/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'owner', password: 'owner password' }),
    });
    expect(register.status).toBe(201);
  }, 60_000);
  afterAll(async () => {
    await Promise.all(processes.filter((p) => p.child.exitCode === null).map((p) => p.stop('SIGKILL')));
    await db?.drop();
  });

  it('3 failures through one process and 2 through the other → both answer 429 with Retry-After', async () => {
    const [a = '', b = ''] = urls;
    for (const [url, n] of [
      [a, 3],
      [b, 2],
    ] as const) {
      for (let i = 0; i < n; i++)
        expect((await login(url, 'owner', `guess ${i}`, '198.51.100.1')).status).toBe(401);
    }
    for (const url of [a, b]) {
      const reply = await login(url, 'owner', 'owner password', '198.51.100.1');
      expect(reply.status).toBe(429);
      expect(Number(reply.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(((await reply.json()) as { error: { code: string } }).error.code).toBe('too_many_attempts');
    }
    // The owner, elsewhere, is not refused by the attacker's failures.
    for (const url of [a, b])
      expect((await login(url, 'owner', 'owner password', '203.0.113.1')).status).toBe(200);
  });
});
