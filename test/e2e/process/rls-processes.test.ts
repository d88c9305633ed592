// Native RLS with real processes: two servers (-db.rls on) on one PostgreSQL database see a policy
// change made through the other server's API, the CLI or directly in the database within 2 s
// (LISTEN/NOTIFY), and the generated policies a DBA reads follow; a login role without the rights
// native RLS needs gets one clear startup line that suggests -db.rls off.

import { randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, withPg, type TestDatabase } from '../../support/databases.js';
import { serverDescribe } from '../../support/server-only.js';
import { runRest, spawnRest, type RestProcess } from './rest-process.js';
import { newSecret } from '../../support/secret.js';

const PROPAGATION_MS = 2000;
const secret = newSecret();
const key = new TextEncoder().encode(secret);
const token = (claims: Record<string, unknown>): Promise<string> =>
  new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime('1h').sign(key);

async function ids(url: string, bearer: string): Promise<number[]> {
  const r = await fetch(`${url}/notes?order=id`, { headers: { authorization: `Bearer ${bearer}` } });
  expect(r.status).toBe(200);
  return ((await r.json()) as Array<{ id: number }>).map((n) => n.id);
}

/** Polls until `probe` holds; returns how long it took. */
async function within(ms: number, probe: () => Promise<boolean>): Promise<number> {
  const start = performance.now();
  for (;;) {
    if (await probe()) return performance.now() - start;
    if (performance.now() - start > ms + 1000) throw new Error(`not seen within ${ms + 1000} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

serverDescribe()('native RLS across processes (postgres)', () => {
  let db: TestDatabase;
  let a: RestProcess;
  let b: RestProcess;
  let urlA: string;
  let urlB: string;
  let user1: string;
  let admin: string;
  const loginRole = `rest_test_weak_${randomBytes(5).toString('hex')}`;
  const serve = (dbUrl: string): RestProcess =>
    spawnRest(['serve', '-db.url', dbUrl, '-db.rls', 'on', '-auth.secret', secret, '-addr', '127.0.0.1:0']);

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    await withPg(db.url, async (c) => {
      await c.query('CREATE TABLE notes (id serial PRIMARY KEY, user_id integer, body text)');
      await c.query("INSERT INTO notes (user_id, body) VALUES (1, 'one'), (2, 'two'), (1, 'three')");
    });
    a = serve(db.url);
    b = serve(db.url);
    [urlA, urlB] = await Promise.all([a.started(), b.started()]);
    expect((await fetch(`${urlA}/auth/setup`, { method: 'POST' })).status).toBe(201);
    user1 = await token({ user_id: 1 });
    admin = await token({ user_id: 1000, is_admin: true });
  }, 60_000);
  afterAll(async () => {
    const running = [a, b].filter((p) => p !== undefined && p.child.exitCode === null);
    await Promise.all(running.map((p) => p?.stop('SIGKILL')));
    await db?.drop();
    await db?.dropRoles([loginRole]);
  });

  const selectPolicy = (): Promise<string> =>
    withPg(db.url, async (c) =>
      String(
        (
          await c.query(
            "SELECT qual FROM pg_policies WHERE tablename = 'notes' AND policyname = 'rest_notes_select'",
          )
        ).rows[0]?.['qual'],
      ),
    );

  const everywhere = async (expected: number[]): Promise<number> =>
    Math.max(
      ...(await Promise.all(
        [urlA, urlB].map((url) =>
          within(
            PROPAGATION_MS,
            async () => JSON.stringify(await ids(url, user1)) === JSON.stringify(expected),
          ),
        ),
      )),
    );

  it("a change through one server's API reaches the other server and the generated policies within 2 s", async () => {
    expect(await ids(urlA, user1)).toEqual([1, 3]);
    expect(await ids(urlB, user1)).toEqual([1, 3]);
    const before = await selectPolicy();
    const added = await fetch(`${urlA}/auth_policies`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        table_name: 'notes',
        action: 'read',
        expression: '',
        description: 'anyone reads notes',
      }),
    });
    expect(added.status).toBe(201);
    expect(await ids(urlA, user1)).toEqual([1, 2, 3]);
    expect(await everywhere([1, 2, 3])).toBeLessThan(PROPAGATION_MS);
    expect(await selectPolicy()).not.toBe(before);
    const removed = await fetch(`${urlA}/auth_policies?table_name=eq.notes`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${admin}` },
    });
    expect(removed.status).toBe(200);
    expect(await ids(urlA, user1)).toEqual([1, 3]);
    expect(await everywhere([1, 3])).toBeLessThan(PROPAGATION_MS);
  });

  it('a change made directly in the database reaches both servers within 2 s', async () => {
    await withPg(db.url, (c) =>
      c.query(
        "INSERT INTO auth_policies (description, table_name, action, expression) VALUES ('psql', 'notes', 'read', 'user_id = 2')",
      ),
    );
    expect(await everywhere([2])).toBeLessThan(PROPAGATION_MS);
    await withPg(db.url, (c) => c.query("DELETE FROM auth_policies WHERE description = 'psql'"));
    expect(await everywhere([1, 3])).toBeLessThan(PROPAGATION_MS);
  });

  it('a change through the CLI reaches both servers within 2 s', async () => {
    const added = await runRest([
      '-db.url',
      db.url,
      'auth',
      'policy',
      'add',
      'notes',
      'read',
      'user_id in (1, 2)',
      'cli policy',
    ]);
    expect(added.code, added.stderr).toBe(0);
    expect(await everywhere([1, 2, 3])).toBeLessThan(PROPAGATION_MS);
  });

  it('refuses to start when the login role lacks the rights: one line naming them, suggesting -db.rls off, exit 3', async () => {
    await withPg(db.url, (c) => c.query(`CREATE ROLE ${loginRole} LOGIN`));
    const weak = new URL(db.url);
    weak.username = loginRole;
    const exit = await runRest([
      'serve',
      '-db.url',
      weak.toString(),
      '-db.rls',
      'on',
      '-auth.secret',
      secret,
      '-addr',
      '127.0.0.1:0',
    ]);
    expect(exit.code).toBe(3);
    expect(exit.stderr).toMatch(/^rest: [^\n]+\n$/);
    expect(exit.stderr).toContain(`native row-level security cannot be set up for login role "${loginRole}"`);
    expect(exit.stderr).toContain('does not own tables');
    expect(exit.stderr).toContain('-db.rls off');
  });
});
