// Native RLS through real HTTP on PostgreSQL (-db.rls on): the database itself enforces the
// generated policies (a DBA's own restrictive policy is obeyed and kept), what POST returns when
// the creator may not read the row back (the same on both paths), other roles keep their access,
// a new table is protected on first use, and a request role that would bypass RLS is refused.

import { randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { requestRoleName } from '../../../runtime/rls/request-role.js';
import { createTestDatabase, withPg, type TestDatabase } from '../../support/databases.js';
import { call, type Reply } from '../../support/http.js';
import { startTestServer, testConfig, type TestServer } from '../../support/server.js';
import { newSecret } from '../../support/secret.js';
import { serverIt } from '../../support/server-only.js';

interface Side {
  readonly rls: boolean;
  readonly db: TestDatabase;
  readonly server: TestServer;
}

const secret = newSecret();
const key = new TextEncoder().encode(secret);
const sign = (claims: Record<string, unknown>): Promise<string> =>
  new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime('1h').sign(key);

describe(`native RLS over HTTP (postgres)`, () => {
  const sides: Side[] = [];
  const auth: Record<'alice' | 'bob' | 'admin', Record<string, string>> = { alice: {}, bob: {}, admin: {} };
  const extraRoles: string[] = [];
  let native: Side;

  const sql = <T = Record<string, unknown>>(side: Side, text: string): Promise<T[]> =>
    withPg(side.db.url, async (c) => (await c.query(text)).rows as T[]);
  const req = (
    side: Side,
    method: string,
    path: string,
    headers: Record<string, string> = {},
    json?: unknown,
  ): Promise<Reply> =>
    call(side.server.url, method, path, { headers, ...(json === undefined ? {} : { json }) });
  const setPolicies = async (side: Side, policies: ReadonlyArray<Record<string, string>>): Promise<void> => {
    expect((await req(side, 'DELETE', '/auth_policies?id=gt.3', auth.admin)).status).toBe(200);
    if (policies.length === 0) return;
    const added = await req(
      side,
      'POST',
      '/auth_policies',
      auth.admin,
      policies.map((p) => ({ ...p, description: 'test' })),
    );
    expect(added.status, added.text).toBe(201);
  };

  beforeAll(async () => {
    auth.alice = { authorization: `Bearer ${await sign({ user_id: 1 })}` };
    auth.bob = { authorization: `Bearer ${await sign({ user_id: 2 })}` };
    auth.admin = { authorization: `Bearer ${await sign({ user_id: 100, is_admin: true })}` };
    for (const rls of [true, false]) {
      const db = await createTestDatabase('postgres');
      await withPg(db.url, (c) =>
        c.query('CREATE TABLE notes (id serial PRIMARY KEY, user_id integer, body text)'),
      );
      const server = await startTestServer({
        ...testConfig(db.url),
        db: { url: db.url, rls },
        auth: { enabled: true, secret, tokenTtlSeconds: 3600 },
      });
      const side = { rls, db, server };
      expect((await req(side, 'POST', '/auth/setup')).status).toBe(201);
      sides.push(side);
    }
    native = sides[0] as Side;
  }, 60_000);
  afterAll(async () => {
    for (const side of sides) {
      await side.server.handle.close();
      await side.db.drop();
    }
    await native?.db.dropRoles(extraRoles);
  });
  beforeEach(async () => {
    for (const side of sides) {
      await sql(
        side,
        "DELETE FROM notes; INSERT INTO notes (id, user_id, body) VALUES (1, 1, 'alice'), (2, 2, 'bob'), (3, NULL, 'nobody'); SELECT setval('notes_id_seq', 100)",
      );
      await setPolicies(side, []);
    }
  });

  it('says rls on in the startup line and shows the generated policies to a DBA', async () => {
    expect(native.server.log.lines.some((l) => String(l['msg']).includes('rls on'))).toBe(true);
    expect((await req(native, 'GET', '/notes', auth.alice)).json).toEqual([
      { id: 1, user_id: 1, body: 'alice' },
    ]);
    const policies = await sql<{ policyname: string; roles: string }>(
      native,
      "SELECT policyname, roles::text FROM pg_policies WHERE tablename = 'notes' AND policyname LIKE 'rest_%' ORDER BY 1",
    );
    const role = requestRoleName(native.db.name);
    expect(policies).toEqual([
      { policyname: 'rest_notes_delete', roles: `{${role}}` },
      { policyname: 'rest_notes_insert', roles: `{${role}}` },
      { policyname: 'rest_notes_others', roles: '{public}' },
      { policyname: 'rest_notes_select', roles: `{${role}}` },
      { policyname: 'rest_notes_update', roles: `{${role}}` },
    ]);
  });

  it("obeys a DBA's own restrictive policy (only the database knows it) and keeps it across regenerations", async () => {
    const role = requestRoleName(native.db.name);
    await sql(
      native,
      `CREATE POLICY dba_no_shouting ON notes AS RESTRICTIVE FOR INSERT TO ${role} WITH CHECK (body <> upper(body))`,
    );
    try {
      const refused = await req(native, 'POST', '/notes', auth.alice, { body: 'LOUD' });
      expect([refused.status, (refused.json as { error: { code: string } }).error.code]).toEqual([
        403,
        'policy_check_failed',
      ]);
      expect(await sql(native, "SELECT id FROM notes WHERE body = 'LOUD'")).toEqual([]);
      await setPolicies(native, [
        { table_name: 'notes', action: 'create', expression: 'auth_user.is_authenticated' },
      ]);
      expect((await req(native, 'POST', '/notes', auth.alice, { body: 'LOUD' })).status).toBe(403);
      expect((await req(native, 'POST', '/notes', auth.alice, { body: 'quiet' })).status).toBe(201);
    } finally {
      await sql(native, 'DROP POLICY dba_no_shouting ON notes');
    }
  });

  it('POST answers 201 with the stored row even when the creator may not read it back, on both paths', async () => {
    for (const side of sides) {
      await setPolicies(side, [
        { table_name: 'notes', action: 'create', expression: 'auth_user.is_authenticated' },
        { table_name: 'notes', action: 'read', expression: 'user_id = 999' },
      ]);
      const created = await req(side, 'POST', '/notes', auth.alice, {
        id: 50,
        body: 'write only',
        user_id: 2,
      });
      expect({ rls: side.rls, status: created.status, body: created.json }).toEqual({
        rls: side.rls,
        status: 201,
        body: { id: 50, user_id: 2, body: 'write only' },
      });
      expect((await req(side, 'GET', '/notes/50', auth.alice)).status).toBe(404);
    }
  });

  it('answers with the owner rule: filled owner column, 403 for another owner, 401 for anonymous', async () => {
    const created = await req(native, 'POST', '/notes', auth.bob, { body: 'mine' });
    expect([created.status, (created.json as { user_id: number }).user_id]).toEqual([201, 2]);
    const forged = await req(native, 'POST', '/notes', auth.bob, { body: 'theirs', user_id: 1 });
    expect([forged.status, (forged.json as { error: { code: string } }).error.code]).toEqual([
      403,
      'owner_mismatch',
    ]);
    expect((await req(native, 'GET', '/notes')).status).toBe(401);
    const moved = await req(native, 'PATCH', '/notes/2', auth.bob, { user_id: 1 });
    expect([moved.status, (moved.json as { error: { code: string } }).error.code]).toEqual([
      403,
      'policy_check_failed',
    ]);
    expect(await sql(native, 'SELECT user_id FROM notes WHERE id = 2')).toEqual([{ user_id: 2 }]);
  });

  // Requests of one statement share a few pipelined connections (runtime/db/postgres/pg-lanes.ts):
  // each one's settings must stay its own. On PGlite parallel connections get each other's answers.
  serverIt()(
    'concurrent requests of different users on shared connections: each reads and writes only as itself',
    async () => {
      const users = Array.from({ length: 24 }, (_, i): 'alice' | 'bob' => (i % 2 === 0 ? 'alice' : 'bob'));
      const own = {
        alice: [{ id: 1, user_id: 1, body: 'alice' }],
        bob: [{ id: 2, user_id: 2, body: 'bob' }],
      };
      const reads = await Promise.all(users.map((u) => req(native, 'GET', '/notes?order=id', auth[u])));
      expect(reads.map((r) => [r.status, r.json])).toEqual(users.map((u) => [200, own[u]]));
      const writes = await Promise.all(users.map((u) => req(native, 'POST', '/notes', auth[u], { body: u })));
      expect(writes.map((w) => [w.status, (w.json as { user_id: number }).user_id])).toEqual(
        users.map((u) => [201, u === 'alice' ? 1 : 2]),
      );
      expect(
        await sql(
          native,
          'SELECT user_id, count(*)::int AS n FROM notes WHERE id > 100 GROUP BY user_id ORDER BY user_id',
        ),
      ).toEqual([
        { user_id: 1, n: 12 },
        { user_id: 2, n: 12 },
      ]);
    },
  );

  it('leaves other database roles their access to the served tables', async () => {
    const reporter = `rest_test_reporter_${randomBytes(4).toString('hex')}`;
    extraRoles.push(reporter);
    await sql(native, `CREATE ROLE ${reporter} NOLOGIN; GRANT SELECT ON notes TO ${reporter}`);
    const rows = await withPg(native.db.url, async (c) => {
      await c.query('BEGIN');
      await c.query(`SET LOCAL ROLE ${reporter}`);
      const r = (await c.query('SELECT id FROM notes ORDER BY id')).rows;
      await c.query('ROLLBACK');
      return r;
    });
    expect(rows).toEqual([{ id: 1 }, { id: 2 }, { id: 3 }]);
  });

  it('keeps the password hash from the request role, even where a policy lets the row through', async () => {
    expect((await req(native, 'GET', '/auth_users?order=id', auth.admin)).status).toBe(200);
    const role = requestRoleName(native.db.name);
    const attempt = (columns: string) =>
      withPg(native.db.url, async (c) => {
        await c.query('BEGIN');
        try {
          await c.query(
            `SELECT set_config('role', $1, true), set_config('rest.is_admin', 'true', true), set_config('rest.action', 'read', true)`,
            [role],
          );
          return (await c.query(`SELECT ${columns} FROM auth_users`)).rows.length;
        } finally {
          await c.query('ROLLBACK');
        }
      });
    expect(await attempt('id, username, is_admin')).toBe(1);
    await expect(attempt('password')).rejects.toMatchObject({ code: '42501' });
    // Reconciling again (a policy change elsewhere) leaves these grants, and the table, alone.
    const version = () => sql(native, "SELECT xmin::text AS v FROM pg_class WHERE relname = 'auth_users'");
    const before = await version();
    await setPolicies(native, [{ table_name: 'notes', action: 'read', expression: '' }]);
    expect((await req(native, 'GET', '/notes', auth.alice)).status).toBe(200);
    expect(await version()).toEqual(before);
  });

  it('protects a table created while the server runs on its first request', async () => {
    await sql(
      native,
      "CREATE TABLE later (id serial PRIMARY KEY, user_id integer, body text); INSERT INTO later (user_id, body) VALUES (1, 'a'), (2, 'b')",
    );
    let reply: Reply | undefined;
    for (let i = 0; i < 40 && reply?.status !== 200; i += 1) {
      reply = await req(native, 'GET', '/later', auth.alice);
      if (reply.status !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(reply?.json).toEqual([{ id: 1, user_id: 1, body: 'a' }]);
    expect(await sql(native, "SELECT relrowsecurity FROM pg_class WHERE relname = 'later'")).toEqual([
      { relrowsecurity: true },
    ]);
    expect((await req(native, 'POST', '/later', auth.bob, { body: 'c' })).status).toBe(201);
  });

  it('regenerates a table whose columns change: the owner policy applies once the column exists', async () => {
    await sql(
      native,
      "CREATE TABLE grows (id serial PRIMARY KEY, body text); INSERT INTO grows (body) VALUES ('a'), ('b')",
    );
    const get = () => req(native, 'GET', '/grows?order=id', auth.alice);
    const until = async (done: (r: Reply) => boolean): Promise<Reply> => {
      let reply = await get();
      for (let i = 0; i < 40 && !done(reply); i += 1) {
        await new Promise((r) => setTimeout(r, 100));
        reply = await get();
      }
      return reply;
    };
    const before = await until((r) => r.status === 403);
    expect((before.json as { error: { code: string } }).error.code).toBe('policy_column_missing');
    await sql(native, 'ALTER TABLE grows ADD COLUMN user_id integer; UPDATE grows SET user_id = id');
    const after = await until((r) => r.status === 200);
    expect(after.json).toEqual([{ id: 1, body: 'a', user_id: 1 }]);
    const select = await sql<{ qual: string }>(
      native,
      "SELECT qual FROM pg_policies WHERE policyname = 'rest_grows_select'",
    );
    expect(select[0]?.qual).toContain('user_id');
  });

  it('refuses every request, writing nothing, while the request role would bypass RLS', async () => {
    const role = requestRoleName(native.db.name);
    await sql(native, `ALTER ROLE ${role} BYPASSRLS`);
    try {
      const read = await req(native, 'GET', '/notes', auth.alice);
      expect([read.status, (read.json as { error: { code: string } }).error.code]).toEqual([
        503,
        'rls_not_enforced',
      ]);
      expect((await req(native, 'DELETE', '/notes?id=gt.0', auth.alice)).status).toBe(503);
      expect(await sql(native, 'SELECT count(*)::int AS n FROM notes')).toEqual([{ n: 3 }]);
    } finally {
      await sql(native, `ALTER ROLE ${role} NOBYPASSRLS`);
    }
    expect((await req(native, 'GET', '/notes', auth.alice)).status).toBe(200);
  });
});
