// Revocation across real server processes (docs/authentication.md), on every database: a session ended through
// one `rest` process — "log out everywhere", a password change, `rest auth user admin` from the
// CLI — is refused by the other process within 2 s, though it had already judged the session valid.

import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/databases.js';
import { describeEachServer } from '../../support/each-database.js';
import { runCli } from '../cli/run-cli.js';
import { spawnRest, type RestProcess } from './rest-process.js';
import { newSecret } from '../../support/secret.js';

const secret = newSecret();

async function post(url: string, body?: unknown, token?: string): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function login(url: string, username: string, password: string): Promise<string> {
  const reply = await post(`${url}/auth/login`, { username, password });
  expect(reply.status).toBe(200);
  return ((await reply.json()) as { token: string }).token;
}

/** A logged-in non-admin reads auth_policies: 403 while the session lives, 401 once it is over. */
const probe = async (url: string, token: string): Promise<number> =>
  (await fetch(`${url}/auth_policies`, { headers: { authorization: `Bearer ${token}` } })).status;

async function statusWithin2s(url: string, token: string, wanted: number): Promise<number> {
  const deadline = Date.now() + 2000;
  for (;;) {
    const status = await probe(url, token);
    if (status === wanted || Date.now() > deadline) return status;
    await new Promise((r) => setTimeout(r, 50));
  }
}

// Two processes on PGlite's one backend interleave their protocol messages (startup fails or hangs),
// and the other hears of an ended session by NOTIFY, which PGlite does not deliver across connections.
describeEachServer('sessions across processes', (kind) => {
  let db: TestDatabase;
  let processes: RestProcess[] = [];
  let urls: string[] = [];
  let n = 0;
  /** A new user of one test, registered through the first process. */
  const newUser = async (): Promise<{ username: string; password: string }> => {
    n += 1;
    const user = { username: `user${n}`, password: `password of user ${n}` };
    expect((await post(`${urls[0]}/auth/register`, user)).status).toBe(201);
    return user;
  };

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    const serve = (): RestProcess =>
      spawnRest(['serve', '-db.url', db.url, '-auth.secret', secret, '-addr', '127.0.0.1:0']);
    processes = [serve(), serve()];
    urls = await Promise.all(processes.map((p) => p.started()));
    expect((await post(`${urls[0]}/auth/setup`)).status).toBe(201);
    // The second process learns of the tables setup made through the first when its schema
    // cache next looks (at most once a second): until then auth_policies is an unknown table.
    for (const url of urls) {
      const deadline = Date.now() + 5000;
      while ((await fetch(`${url}/auth_policies`)).status === 404 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 100));
    }
  }, 60_000);
  afterAll(async () => {
    await Promise.all(processes.filter((p) => p.child.exitCode === null).map((p) => p.stop('SIGKILL')));
    await db?.drop();
  });

  it('log out everywhere through one process: the other refuses the sessions within 2 s', async () => {
    const [a = '', b = ''] = urls;
    const user = await newUser();
    const first = await login(a, user.username, user.password);
    const second = await login(b, user.username, user.password);
    expect(await probe(b, first)).toBe(403);
    expect(await probe(b, second)).toBe(403);
    const revoke = await post(`${a}/auth/sessions/revoke`, undefined, first);
    expect(await revoke.json()).toEqual({ revoked: 2 });
    expect(await statusWithin2s(b, first, 401)).toBe(401);
    expect(await statusWithin2s(b, second, 401)).toBe(401);
  });

  it("a password change through one process ends the user's other sessions on the other", async () => {
    const [a = '', b = ''] = urls;
    const user = await newUser();
    const mine = await login(a, user.username, user.password);
    const elsewhere = await login(b, user.username, user.password);
    expect(await probe(b, elsewhere)).toBe(403);
    const change = await post(
      `${a}/auth/password`,
      { current_password: user.password, new_password: `${user.password}!` },
      mine,
    );
    expect(change.status).toBe(200);
    expect(await statusWithin2s(b, elsewhere, 401)).toBe(401);
    expect(await probe(b, mine)).toBe(403);
  });

  it('rest auth user admin from the CLI: the promoted user’s old session is refused by both processes', async () => {
    const user = await newUser();
    const token = await login(urls[0] ?? '', user.username, user.password);
    for (const url of urls) expect(await probe(url, token)).toBe(403);
    const cli = await runCli(['-db.url', db.url, 'auth', 'user', 'admin', user.username, 'true']);
    expect(cli.code, cli.stderr).toBe(0);
    for (const url of urls) expect(await statusWithin2s(url, token, 401)).toBe(401);
    const promoted = await login(urls[1] ?? '', user.username, user.password);
    expect(await probe(urls[0] ?? '', promoted)).toBe(200);
  });
});
