// Failing requests under load cost no database connection, on both enforcement paths: a value
// PostgreSQL refuses (a bad uuid), a unique violation, a CHECK constraint and a policy's check
// refused inside the statement each answer their own 4xx, and the server's connections are the
// same backends before and after 50 of them (pg_stat_database.sessions and the backends' pids).

import { randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import pg from 'pg';
import { afterAll, beforeAll, expect } from 'vitest';
import { createTestDatabase, withPg, type TestDatabase } from '../../support/databases.js';
import { call, type Reply } from '../../support/http.js';
import { newSecret } from '../../support/secret.js';
import { startTestServer, testConfig, type TestServer } from '../../support/server.js';
import { serverDescribe, serverIt } from '../../support/server-only.js';

const secret = newSecret();
const key = new TextEncoder().encode(secret);
const sign = (claims: Record<string, unknown>): Promise<string> =>
  new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime('1h').sign(key);

const FAILING_REQUESTS = 50;

for (const rls of [true, false]) {
  serverDescribe()(`failing statements keep their connections [postgres, rls ${rls ? 'on' : 'off'}]`, () => {
    let db: TestDatabase;
    let server: TestServer;
    /** One session for every look at the statistics: it is counted once, before the first look. */
    let watcher: pg.Client;
    const auth: Record<'alice' | 'admin', Record<string, string>> = { alice: {}, admin: {} };
    const req = (method: string, path: string, headers: Record<string, string>, json?: unknown) =>
      call(server.url, method, path, { headers, ...(json === undefined ? {} : { json }) });

    /** New sessions opened on the test database so far, and the pids of rest's own backends now. */
    const connections = async (): Promise<{ sessions: number; pids: number[] }> => {
      const sessions = await watcher.query<{ n: string }>(
        'SELECT sessions::text AS n FROM pg_stat_database WHERE datname = current_database()',
      );
      const pids = await watcher.query<{ pid: number }>(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'rest' ORDER BY pid",
      );
      return { sessions: Number(sessions.rows[0]?.n), pids: pids.rows.map((r) => r.pid) };
    };

    beforeAll(async () => {
      auth.alice = { authorization: `Bearer ${await sign({ user_id: 1 })}` };
      auth.admin = { authorization: `Bearer ${await sign({ user_id: 100, is_admin: true })}` };
      db = await createTestDatabase('postgres');
      await withPg(db.url, (c) =>
        c.query(
          "CREATE TABLE pubu (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), user_id integer, code text UNIQUE, qty integer CHECK (qty >= 0), tier text NOT NULL DEFAULT 'gold')",
        ),
      );
      server = await startTestServer({
        ...testConfig(db.url),
        db: { url: db.url, rls },
        auth: { enabled: true, secret, tokenTtlSeconds: 3600 },
      });
      expect((await req('POST', '/auth/setup', {})).status).toBe(201);
      const policies = await req('POST', '/auth_policies', auth.admin, [
        { table_name: 'pubu', action: 'read', expression: 'auth_user.is_authenticated', description: 't' },
        // A row sent without a tier gets the column's default, which only the statement knows.
        {
          table_name: 'pubu',
          action: 'create',
          expression: "user_id = auth_user.id and tier <> 'gold'",
          description: 't',
        },
      ]);
      expect(policies.status, policies.text).toBe(201);
      watcher = new pg.Client({ connectionString: db.url });
      await watcher.connect();
    }, 60_000);

    afterAll(async () => {
      await watcher?.end();
      await server?.handle.close();
      await db?.drop();
    });

    /** One of four failing requests, each a new value; its status and error code. */
    const failing = async (i: number): Promise<[number, string | undefined]> => {
      const unique = randomBytes(4).toString('hex');
      let reply: Reply;
      switch (i % 4) {
        case 0:
          reply = await req('GET', `/pubu/not-a-uuid-${unique}`, auth.alice);
          break;
        case 1:
          reply = await req('POST', '/pubu', auth.alice, {
            user_id: 1,
            code: 'taken',
            qty: 1,
            tier: 'basic',
          });
          break;
        case 2:
          reply = await req('POST', '/pubu', auth.alice, {
            user_id: 1,
            code: unique,
            qty: -1,
            tier: 'basic',
          });
          break;
        default:
          reply = await req('POST', '/pubu', auth.alice, { user_id: 1, code: unique, qty: 1 });
      }
      return [reply.status, (reply.json as { error?: { code?: string } } | undefined)?.error?.code];
    };

    serverIt()(
      `${FAILING_REQUESTS} failing requests open no new PostgreSQL connection and leave the same backends`,
      async () => {
        // The same kinds of requests once successfully, so that the connections they use are open.
        const created = await req('POST', '/pubu', auth.alice, {
          user_id: 1,
          code: 'taken',
          qty: 1,
          tier: 'basic',
        });
        expect(created.status, created.text).toBe(201);
        const id = (created.json as { id: string }).id;
        expect((await req('GET', `/pubu/${id}`, auth.alice)).status).toBe(200);
        expect(
          (await req('POST', '/pubu', auth.alice, { user_id: 1, code: 'second', qty: 0, tier: 'basic' }))
            .status,
        ).toBe(201);
        const before = await connections();
        expect(before.pids.length).toBeGreaterThan(0);

        const answers = new Map<string, number>();
        for (let i = 0; i < FAILING_REQUESTS; i += 1) {
          const [status, code] = await failing(i);
          expect(status).toBeGreaterThanOrEqual(400);
          expect(status).toBeLessThan(500);
          const k = `${status} ${code ?? ''}`;
          answers.set(k, (answers.get(k) ?? 0) + 1);
        }
        // Each kind answered as itself.
        expect([...answers.keys()].sort()).toEqual(
          [
            '400 invalid_value',
            '409 unique_violation',
            '400 check_violation',
            '403 policy_check_failed',
          ].sort(),
        );

        const after = await connections();
        expect(after.sessions - before.sessions).toBe(0);
        expect(after.pids).toEqual(before.pids);
        // The same connections still serve.
        expect((await req('GET', `/pubu/${id}`, auth.alice)).status).toBe(200);
        expect(
          await withPg(db.url, async (c) => (await c.query('SELECT count(*)::int AS n FROM pubu')).rows),
        ).toEqual([{ n: 2 }]);
      },
    );
  });
}
