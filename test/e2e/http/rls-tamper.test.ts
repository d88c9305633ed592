// Native RLS tamper detection through real HTTP (docs/row-level-security.md): a generated policy dropped or altered,
// or row-level security disabled, by hand through a raw connection is noticed and restored within
// 2 s — with no traffic (the detection alone) and while requests keep coming — and no request ever
// returns or deletes a row the policy hides: it answers the right rows or 503 `rls_not_enforced`.
// Both detection modes: the event trigger (the server logs in as a superuser) and the periodic
// check (a login role that owns the tables but may not create an event trigger).

import { randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase, withPg, type TestDatabase } from '../../support/databases.js';
import { call, type Reply } from '../../support/http.js';
import { serverDescribe } from '../../support/server-only.js';
import { startTestServer, testConfig, type TestServer } from '../../support/server.js';
import { newSecret } from '../../support/secret.js';

const RESTORE_MS = 2000;
const secret = newSecret();
const key = new TextEncoder().encode(secret);
const bearer = async (claims: Record<string, unknown>): Promise<Record<string, string>> => ({
  authorization: `Bearer ${await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime('1h').sign(key)}`,
});

const ALICE_ROWS = [{ id: 1, user_id: 1, body: 'alice' }];
const errorCode = (r: Reply): unknown => (r.json as { error?: { code?: unknown } } | undefined)?.error?.code;

/** Polls `probe` until it holds; fails once `ms` have passed since `since`. Returns the time taken. */
async function within(ms: number, since: number, probe: () => Promise<boolean>): Promise<number> {
  for (;;) {
    const ok = await probe();
    const took = performance.now() - since;
    if (ok) return took;
    if (took > ms) throw new Error(`not seen within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

interface Mode {
  readonly name: string;
  /** Whether the server logs in as the superuser of REST_TEST_PG_URL or as a plain table owner. */
  readonly superuser: boolean;
  readonly startLine: string;
}

const MODES: readonly Mode[] = [
  { name: 'event trigger', superuser: true, startLine: 'rls tamper detection: event trigger' },
  { name: 'periodic check', superuser: false, startLine: 'rls tamper detection: periodic check every 1 s' },
];

interface Tamper {
  readonly name: string;
  readonly sql: string;
  /** False where the change leaves nothing of rest's to restore (FORCE is not part of what rest generates). */
  readonly restores: boolean;
}

const TAMPERS: readonly Tamper[] = [
  { name: 'DROP POLICY', sql: 'DROP POLICY rest_notes_select ON notes', restores: true },
  {
    name: 'ALTER POLICY … USING (true)',
    sql: 'ALTER POLICY rest_notes_select ON notes USING (true)',
    restores: true,
  },
  {
    name: 'ALTER POLICY on the DELETE policy',
    sql: 'ALTER POLICY rest_notes_delete ON notes USING (true)',
    restores: true,
  },
  { name: 'DISABLE ROW LEVEL SECURITY', sql: 'ALTER TABLE notes DISABLE ROW LEVEL SECURITY', restores: true },
  {
    name: 'NO FORCE ROW LEVEL SECURITY',
    sql: 'ALTER TABLE notes FORCE ROW LEVEL SECURITY; ALTER TABLE notes NO FORCE ROW LEVEL SECURITY',
    restores: false,
  },
];

serverDescribe()('RLS tamper detection over HTTP (postgres)', () => {
  describe.each(MODES)('$name', (mode) => {
    let db: TestDatabase;
    let server: TestServer;
    const roles: string[] = [];
    const auth: Record<'alice' | 'admin', Record<string, string>> = { alice: {}, admin: {} };
    /** As the superuser of REST_TEST_PG_URL: the DBA working behind the server's back. */
    const raw = <T = Record<string, unknown>>(text: string): Promise<T[]> =>
      withPg(db.url, async (c) => (await c.query(text)).rows as T[]);
    const req = (method: string, path: string, headers: Record<string, string> = {}): Promise<Reply> =>
      call(server.url, method, path, { headers });
    /** What a DBA reads of the generated policies and the table's RLS flag. */
    const catalog = async (): Promise<string> =>
      JSON.stringify([
        await raw(
          "SELECT policyname, permissive, roles::text, cmd, qual, with_check FROM pg_policies WHERE tablename = 'notes' ORDER BY policyname",
        ),
        await raw(
          "SELECT relrowsecurity FROM pg_class WHERE relname = 'notes' AND relnamespace = current_schema()::regnamespace",
        ),
      ]);
    const warnings = (): string[] =>
      server.log.lines
        .filter((l) => l['level'] === 40 && l['table'] === 'notes' && Array.isArray(l['found']))
        .map((l) => String(l['msg']));

    beforeAll(async () => {
      auth.alice = await bearer({ user_id: 1 });
      auth.admin = await bearer({ user_id: 100, is_admin: true });
      db = await createTestDatabase('postgres');
      const url = new URL(db.url);
      await withPg(db.url, async (c) => {
        await c.query('CREATE TABLE notes (id serial PRIMARY KEY, user_id integer, body text)');
        if (!mode.superuser) {
          const owner = `rest_test_owner_${randomBytes(5).toString('hex')}`;
          roles.push(owner);
          await c.query(`CREATE ROLE ${owner} LOGIN CREATEROLE`);
          await c.query(`ALTER SCHEMA public OWNER TO ${owner}`);
          await c.query(`ALTER TABLE notes OWNER TO ${owner}`);
          url.username = owner;
        }
      });
      server = await startTestServer({
        ...testConfig(url.toString()),
        db: { url: url.toString(), rls: true },
        auth: { enabled: true, secret, tokenTtlSeconds: 3600 },
      });
      expect((await req('POST', '/auth/setup')).status).toBe(201);
    }, 60_000);
    afterAll(async () => {
      await server?.handle.close();
      await db?.drop();
      await db?.dropRoles(roles);
    });
    beforeEach(async () => {
      await raw(
        "DELETE FROM notes; INSERT INTO notes (id, user_id, body) VALUES (1, 1, 'alice'), (2, 2, 'bob'), (3, NULL, 'nobody')",
      );
      expect((await req('GET', '/notes?order=id', auth.alice)).json).toEqual(ALICE_ROWS);
    });

    it('says which detection it uses when it starts', () => {
      const lines = server.log.lines.map((l) => String(l['msg']));
      expect(lines.filter((m) => m.startsWith('rls tamper detection:'))).toEqual([
        expect.stringContaining(mode.startLine) as unknown,
      ]);
    });

    it.each(TAMPERS)(
      '$name: restored within 2 s with no traffic, and never a hidden row while requests come',
      async (tamper) => {
        const generated = await catalog();
        const warned = warnings().length;

        // No traffic: the detection alone notices and restores.
        let since = performance.now();
        await raw(tamper.sql);
        await within(RESTORE_MS, since, async () => (await catalog()) === generated);
        expect(warnings().length).toBe(warned + (tamper.restores ? 1 : 0));

        // With traffic: reads and a delete of bob's row keep coming while the change lands.
        const replies: Array<{ readonly kind: 'read' | 'delete'; readonly reply: Reply }> = [];
        let stop = false;
        const traffic = (async () => {
          while (!stop) {
            replies.push({ kind: 'read', reply: await req('GET', '/notes?order=id', auth.alice) });
            replies.push({ kind: 'delete', reply: await req('DELETE', '/notes?id=eq.2', auth.alice) });
          }
        })();
        try {
          await new Promise((r) => setTimeout(r, 50));
          since = performance.now();
          await raw(tamper.sql);
          await within(RESTORE_MS, since, async () => {
            if ((await catalog()) !== generated) return false;
            const read = await req('GET', '/notes?order=id', auth.alice);
            return read.status === 200 && JSON.stringify(read.json) === JSON.stringify(ALICE_ROWS);
          });
        } finally {
          stop = true;
          await traffic;
        }
        const wrong = replies.filter(({ kind, reply }) => {
          if (reply.status === 503) return errorCode(reply) !== 'rls_not_enforced';
          if (reply.status !== 200) return true;
          return JSON.stringify(reply.json) !== JSON.stringify(kind === 'read' ? ALICE_ROWS : { deleted: 0 });
        });
        expect(wrong.map(({ kind, reply }) => `${kind}: ${reply.status} ${reply.text}`)).toEqual([]);
        expect(replies.length).toBeGreaterThan(2);
        expect(await raw('SELECT id FROM notes ORDER BY id')).toEqual([{ id: 1 }, { id: 2 }, { id: 3 }]);
        expect(warnings().length).toBe(warned + (tamper.restores ? 2 : 0));
      },
    );

    it('names the table and what it found in the warning, and logs the restoration', async () => {
      const restored = (): number =>
        server.log.lines.filter(
          (l) => l['table'] === 'notes' && String(l['msg']).startsWith('row-level security restored'),
        ).length;
      const before = restored();
      await raw('DROP POLICY rest_notes_update ON notes; ALTER TABLE notes DISABLE ROW LEVEL SECURITY');
      await within(RESTORE_MS, performance.now(), async () => restored() > before);
      const warning = server.log.lines.findLast((l) => l['level'] === 40 && l['table'] === 'notes');
      expect(warning?.['found']).toEqual([
        'row-level security is disabled',
        'policy rest_notes_update is missing',
      ]);
      expect(String(warning?.['msg'])).toMatch(
        /^the generated row-level security of notes was changed by hand/,
      );
    });
  });

  describe('the event trigger', () => {
    let db: TestDatabase;
    const trigger = async (): Promise<unknown[]> =>
      withPg(
        db.url,
        async (c) =>
          (await c.query("SELECT oid, evtenabled FROM pg_event_trigger WHERE evtname = 'rest_rls_tamper'"))
            .rows,
      );
    const serve = (): Promise<TestServer> =>
      startTestServer({
        ...testConfig(db.url),
        db: { url: db.url, rls: true },
        auth: { enabled: true, secret, tokenTtlSeconds: 3600 },
      });

    beforeAll(async () => {
      db = await createTestDatabase('postgres');
      await withPg(db.url, (c) =>
        c.query('CREATE TABLE notes (id serial PRIMARY KEY, user_id integer, body text)'),
      );
    });
    afterAll(async () => {
      await db?.drop();
    });

    it('is created once for every server on the database, outlives a server that stops, and never fails a DBA’s DDL', async () => {
      const first = await serve();
      const created = await trigger();
      expect(created).toHaveLength(1);
      const second = await serve();
      expect(await trigger()).toEqual(created);
      expect(
        second.log.lines.some((l) => String(l['msg']).startsWith('rls tamper detection: event trigger')),
      ).toBe(true);
      await first.handle.close();
      expect(await trigger()).toEqual(created);
      await withPg(db.url, async (c) => {
        await c.query('CREATE TABLE dba_own (id integer)');
        await c.query('ALTER TABLE dba_own ENABLE ROW LEVEL SECURITY');
        await c.query('CREATE POLICY dba_policy ON dba_own USING (id > 0)');
        await c.query("COMMENT ON POLICY dba_policy ON dba_own IS 'mine'");
        await c.query('DROP TABLE dba_own');
      });
      await second.handle.close();
      expect(await trigger()).toEqual(created);
    });
  });
});
