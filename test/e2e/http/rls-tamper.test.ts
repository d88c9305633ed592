// Native RLS tamper detection through real HTTP (docs/row-level-security.md): a generated policy dropped or altered,
// or row-level security disabled, by hand through a raw connection is noticed and restored within
// 2 s — with no traffic (the detection alone) and while requests keep coming — and no request ever
// returns or deletes a row the policy hides: it answers the right rows or 503 `rls_not_enforced`.
// Both detection modes: the event trigger (the server logs in as a superuser) and the periodic
// check (a login role that owns the tables but may not create an event trigger, or a server behind
// a transaction pooler, where nothing LISTENs). The request role's column privileges — what column
// rules withhold from it — are watched the same way: a GRANT or REVOKE by hand is undone within 2 s.

import { randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { requestRoleName } from '../../../runtime/rls/request-role.js';
import {
  createTestDatabase,
  pgBouncerSkipReason,
  throughPgBouncer,
  withPg,
  type TestDatabase,
} from '../../support/databases.js';
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

interface PrivilegeMode extends Mode {
  /** Through PgBouncer with `-db.pooler transaction` and no URL to LISTEN on. */
  readonly pooler: boolean;
}

const PRIVILEGE_MODES: readonly PrivilegeMode[] = [
  ...MODES.map((m) => ({ ...m, pooler: false })),
  {
    name: 'pooler, periodic check',
    superuser: true,
    pooler: true,
    startLine: 'rls tamper detection: periodic check every 1 s',
  },
];

interface PrivilegeTamper {
  readonly name: string;
  /** The statement, `ROLE` standing for the request role. */
  readonly sql: string;
  /** What the warning says was found. */
  readonly found: readonly string[];
}

const PRIVILEGE_TAMPERS: readonly PrivilegeTamper[] = [
  {
    name: 'GRANT SELECT (note)',
    sql: 'GRANT SELECT (note) ON people TO ROLE',
    found: ['the request role may read withheld column note'],
  },
  {
    name: 'GRANT SELECT on the whole table',
    sql: 'GRANT SELECT ON people TO ROLE',
    found: ['the request role may read withheld column note'],
  },
  {
    name: 'REVOKE SELECT (email)',
    sql: 'REVOKE SELECT (email) ON people FROM ROLE',
    found: ['the request role may not read column email'],
  },
  {
    name: 'REVOKE ALL',
    sql: 'REVOKE ALL ON people FROM ROLE',
    found: [
      'the request role may not read column id, user_id, email',
      'the request role lost INSERT, UPDATE or DELETE',
    ],
  },
];

// Alice reads her email and the ids of every row; bob's email is masked; the note is read by no
// request, so the request role has no SELECT on it.
const PEOPLE_POLICIES = [
  {
    table_name: 'people',
    action: 'read',
    expression: 'user_id = auth_user.id',
    columns: 'id, user_id, email',
  },
  { table_name: 'people', action: 'read', expression: 'auth_user.is_authenticated', columns: 'id, user_id' },
  {
    table_name: 'people',
    action: 'read_mine',
    expression: 'user_id = auth_user.id',
    columns: 'id, user_id, email',
  },
];
const ALICE_SEES = [
  { id: 1, user_id: 1, email: 'alice@example.com' },
  { id: 2, user_id: 2, email: null },
];

const bouncerReason = pgBouncerSkipReason();

serverDescribe()('column privileges of the request role restored over HTTP (postgres)', () => {
  describe.each(PRIVILEGE_MODES)('$name', (mode) => {
    let db: TestDatabase;
    let server: TestServer;
    let role: string;
    const roles: string[] = [];
    const auth: Record<'alice' | 'admin', Record<string, string>> = { alice: {}, admin: {} };
    const raw = <T = Record<string, unknown>>(text: string): Promise<T[]> =>
      withPg(db.url, async (c) => (await c.query(text)).rows as T[]);
    const req = (method: string, path: string, headers: Record<string, string> = {}, body?: unknown) =>
      call(server.url, method, path, { headers, ...(body === undefined ? {} : { json: body }) });
    /** What the request role may do on `people`, column by column, as a DBA reads it. */
    const privileges = async (): Promise<string> =>
      JSON.stringify(
        await raw(
          `SELECT a.attname, has_column_privilege('${role}', 'people', a.attname, 'SELECT') AS can_select,
                  has_table_privilege('${role}', 'people', 'INSERT, UPDATE, DELETE') AS can_write
           FROM pg_attribute a WHERE a.attrelid = 'people'::regclass AND a.attnum > 0 ORDER BY a.attnum`,
        ),
      );
    const warningsFor = (): Array<Record<string, unknown>> =>
      server.log.lines.filter(
        (l) => l['level'] === 40 && l['table'] === 'people' && Array.isArray(l['found']),
      );
    const restoredLines = (): number =>
      server.log.lines.filter(
        (l) => l['table'] === 'people' && String(l['msg']).startsWith('row-level security restored'),
      ).length;
    const aliceReads = async (): Promise<boolean> => {
      const read = await req('GET', '/people?order=id', auth.alice);
      return read.status === 200 && JSON.stringify(read.json) === JSON.stringify(ALICE_SEES);
    };

    beforeAll(async () => {
      if (mode.pooler && bouncerReason !== undefined) return;
      auth.alice = await bearer({ user_id: 1 });
      auth.admin = await bearer({ user_id: 100, is_admin: true });
      db = await createTestDatabase('postgres');
      role = requestRoleName(new URL(db.url).pathname.slice(1));
      const url = new URL(db.url);
      await withPg(db.url, async (c) => {
        await c.query('CREATE TABLE people (id serial PRIMARY KEY, user_id integer, email text, note text)');
        await c.query(
          "INSERT INTO people (id, user_id, email, note) VALUES (1, 1, 'alice@example.com', 'n1'), (2, 2, 'bob@example.com', 'n2')",
        );
        if (!mode.superuser) {
          const owner = `rest_test_owner_${randomBytes(5).toString('hex')}`;
          roles.push(owner);
          await c.query(`CREATE ROLE ${owner} LOGIN CREATEROLE`);
          await c.query(`ALTER SCHEMA public OWNER TO ${owner}`);
          await c.query(`ALTER TABLE people OWNER TO ${owner}`);
          url.username = owner;
        }
      });
      const serve = (serverUrl: string, pooler: boolean): Promise<TestServer> =>
        startTestServer({
          ...testConfig(serverUrl),
          db: { url: serverUrl, rls: true, ...(pooler ? { pooler: 'transaction' as const } : {}) },
          auth: { enabled: true, secret, tokenTtlSeconds: 3600 },
        });
      // Through a transaction pooler the auth tables are not created: a direct server sets up.
      server = await serve(url.toString(), false);
      expect((await req('POST', '/auth/setup')).status).toBe(201);
      const added = await req(
        'POST',
        '/auth_policies',
        auth.admin,
        PEOPLE_POLICIES.map((p) => ({ ...p, description: 'people' })),
      );
      expect(added.status, added.text).toBe(201);
      if (mode.pooler) {
        await server.handle.close();
        server = await serve(throughPgBouncer(url.toString()), true);
      }
      await within(RESTORE_MS, performance.now(), aliceReads);
    }, 60_000);
    afterAll(async () => {
      await server?.handle.close();
      await db?.drop();
      await db?.dropRoles(roles);
    });

    const bouncerIt = mode.pooler && bouncerReason !== undefined ? it.skip : it;

    bouncerIt('says which detection it uses when it starts', () => {
      const lines = server.log.lines.map((l) => String(l['msg']));
      expect(lines.filter((m) => m.startsWith('rls tamper detection:'))).toEqual([
        expect.stringContaining(mode.startLine) as unknown,
      ]);
    });

    bouncerIt.each(PRIVILEGE_TAMPERS)(
      '$name: restored within 2 s with no traffic, logged, and the columns read as before',
      async (tamper) => {
        const granted = await privileges();
        expect(JSON.parse(granted)).toEqual([
          { attname: 'id', can_select: true, can_write: true },
          { attname: 'user_id', can_select: true, can_write: true },
          { attname: 'email', can_select: true, can_write: true },
          { attname: 'note', can_select: false, can_write: true },
        ]);
        const warned = warningsFor().length;
        const restored = restoredLines();
        const since = performance.now();
        await raw(tamper.sql.replace('ROLE', `"${role}"`));
        await within(RESTORE_MS, since, async () => (await privileges()) === granted);
        await within(RESTORE_MS, since, async () => restoredLines() > restored);
        const warnings = warningsFor().slice(warned);
        expect(warnings.map((w) => w['found'])).toEqual([tamper.found]);
        expect(String(warnings[0]?.['msg'])).toMatch(
          /^the generated row-level security of people was changed by hand/,
        );
        expect(await aliceReads()).toBe(true);
        const hidden = await req('GET', '/people?select=id,note', auth.alice);
        expect({ status: hidden.status, code: errorCode(hidden) }).toEqual({
          status: 403,
          code: 'hidden_column',
        });
      },
    );

    bouncerIt(
      'refuses the table while PUBLIC may read a withheld column, and serves it again once that grant is gone',
      async () => {
        const warned = warningsFor().length;
        let since = performance.now();
        await raw('GRANT SELECT (note) ON people TO PUBLIC');
        await within(RESTORE_MS, since, async () => {
          const read = await req('GET', '/people?order=id', auth.alice);
          return read.status === 503 && errorCode(read) === 'rls_not_enforced';
        });
        expect(
          warningsFor()
            .slice(warned)
            .map((w) => w['found']),
        ).toEqual([['the request role may read withheld column note']]);
        since = performance.now();
        await raw('REVOKE SELECT (note) ON people FROM PUBLIC');
        await within(RESTORE_MS, since, aliceReads);
        expect(warningsFor()).toHaveLength(warned + 1);
      },
    );
  });

  describe('an event trigger of an earlier version', () => {
    let db: TestDatabase;

    beforeAll(async () => {
      db = await createTestDatabase('postgres');
    });
    afterAll(async () => {
      await db?.drop();
    });

    it('is re-created to fire on GRANT and REVOKE too', async () => {
      await withPg(db.url, async (c) => {
        await c.query('CREATE TABLE notes (id serial PRIMARY KEY, user_id integer, body text)');
        await c.query(
          "CREATE FUNCTION rest_rls_tamper_notify() RETURNS event_trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_notify('rest_rls', ''); END $$",
        );
        await c.query(
          "CREATE EVENT TRIGGER rest_rls_tamper ON ddl_command_end WHEN TAG IN ('CREATE POLICY', 'ALTER POLICY', 'DROP POLICY', 'ALTER TABLE', 'COMMENT', 'DROP OWNED') EXECUTE FUNCTION rest_rls_tamper_notify()",
        );
      });
      const server = await startTestServer({
        ...testConfig(db.url),
        db: { url: db.url, rls: true },
        auth: { enabled: true, secret, tokenTtlSeconds: 3600 },
      });
      try {
        const tags = await withPg(
          db.url,
          async (c) =>
            (await c.query("SELECT evttags FROM pg_event_trigger WHERE evtname = 'rest_rls_tamper'"))
              .rows as Array<{ evttags: string[] }>,
        );
        expect(tags).toHaveLength(1);
        expect(tags[0]?.evttags).toEqual(expect.arrayContaining(['GRANT', 'REVOKE', 'DROP POLICY']));
        expect(
          server.log.lines.some((l) => String(l['msg']).startsWith('rls tamper detection: event trigger')),
        ).toBe(true);
      } finally {
        await server.handle.close();
      }
    });
  });
});
