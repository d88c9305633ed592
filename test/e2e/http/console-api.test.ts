// The console's admin-only API (docs/console.md) on every database and enforcement path: the
// matrix for a caller, explain with a row, and "try as" with a write rolled back.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAvailable } from '../../support/databases.js';
import { startTestServer } from '../../support/server.js';
import { client } from '../../support/http.js';
import { expectError } from './matrix.js';
import {
  forEachAuthDatabase,
  resetRows,
  setPolicies,
  startAuthSuite,
  tableRows,
  type PolicyContext,
} from './policy-support.js';

interface Cell {
  readonly decision: string;
  readonly status?: number;
  readonly policies: readonly number[];
}
interface MatrixBody {
  readonly tables: ReadonlyArray<{
    readonly table: string;
    readonly cells: Readonly<Record<string, Cell>>;
    readonly column_access?: { readonly read: unknown };
  }>;
  readonly escalations: readonly unknown[];
}

const cell = (body: unknown, table: string, action: string): Cell | undefined =>
  (body as MatrixBody).tables.find((t) => t.table === table)?.cells[action];

forEachAuthDatabase('console API', (ctx) => {
  it('answers admins only: 401 without a token, 403 for a user, 404 for an unknown endpoint', async () => {
    const { http, alice, admin } = ctx();
    const caller = { caller: { kind: 'anonymous' } };
    expectError(await http.post('/_/api/matrix', caller), 401, 'unauthenticated');
    expectError(await http.post('/_/api/matrix', caller, alice.auth), 403, 'forbidden');
    expectError(await http.post('/_/api/nothing', caller, admin.auth), 404, 'not_found');
    expectError(await http.get('/_/api/matrix', admin.auth), 405, 'method_not_allowed');
    expectError(await http.post('/_/api/matrix', { caller: { kind: 'x' } }, admin.auth), 400, 'invalid_body');
  });

  it('shows the matrix for a caller with the deciding rows and escalation warnings', async () => {
    const { http, admin, alice } = ctx();
    await setPolicies(ctx(), [
      { table_name: 'notes', action: 'read', expression: 'user_id = auth_user.id' },
      { table_name: 'plain', action: 'read', expression: '' },
      { table_name: 'posts', action: 'all', expression: 'auth_user.is_admin' },
      {
        table_name: 'docs',
        action: 'read',
        expression: 'exists (select from notes where user_id = auth_user.id)',
      },
    ]);
    const policies = (await http.get('/auth_policies?order=id.asc', admin.auth)).json as Array<{
      id: number;
      table_name: string;
    }>;
    const idOf = (table: string): number | undefined => policies.find((p) => p.table_name === table)?.id;
    const [notesRead, plainRead, postsAll] = [idOf('notes'), idOf('plain'), idOf('posts')];
    const asAlice = await http.post(
      '/_/api/matrix',
      { caller: { kind: 'user', ref: alice.username } },
      admin.auth,
    );
    expect(asAlice.status, asAlice.text).toBe(200);
    expect(cell(asAlice.json, 'notes', 'read')).toEqual({
      decision: 'filter',
      policies: [notesRead],
      level: expect.any(String),
    });
    expect(cell(asAlice.json, 'plain', 'read')).toMatchObject({ decision: 'allow', policies: [plainRead] });
    expect(cell(asAlice.json, 'posts', 'update')).toMatchObject({
      decision: 'deny',
      status: 403,
      policies: [postsAll],
    });
    // The default row of table `all` (id 3) decides where no row of the table does.
    expect(cell(asAlice.json, 'notes', 'delete')).toMatchObject({ decision: 'filter', policies: [3] });
    expect(cell(asAlice.json, 'auth_users', 'read')).toMatchObject({
      decision: 'deny',
      status: 403,
      policies: [1],
    });
    // Non-admins may create notes (the default row 3), through which the docs row grants reads.
    expect((asAlice.json as MatrixBody).escalations).toContainEqual(
      expect.objectContaining({ table: 'notes', action: 'create', policy_id: 3, relation_table: 'docs' }),
    );
    const anonymous = await http.post('/_/api/matrix', { caller: { kind: 'anonymous' } }, admin.auth);
    expect(cell(anonymous.json, 'notes', 'read')).toMatchObject({ decision: 'deny', status: 401 });
    const asAdmin = await http.post('/_/api/matrix', { caller: { kind: 'admin' } }, admin.auth);
    expect(cell(asAdmin.json, 'posts', 'update')).toMatchObject({ decision: 'allow' });
    expect((asAdmin.json as MatrixBody).tables.map((t) => t.table)).not.toContain('auth_sessions');
  });

  it('explains a row for a caller with the compiled predicate', async () => {
    const { http, admin, alice, bob } = ctx();
    await setPolicies(ctx(), [{ table_name: 'notes', action: 'read', expression: 'user_id = auth_user.id' }]);
    await resetRows(
      ctx(),
      'notes',
      ['id', 'user_id', 'body'],
      [
        [1, alice.id, 'a'],
        [2, bob.id, 'b'],
      ],
    );
    const reply = await http.post(
      '/_/api/explain',
      { caller: { kind: 'user', ref: String(alice.id) }, table: 'notes', action: 'read', row: '2' },
      admin.auth,
    );
    expect(reply.status, reply.text).toBe(200);
    const body = reply.json as {
      decision: { kind: string };
      predicate: { sql: string };
      row: { value: unknown };
      rls_ddl: unknown;
    };
    expect(body.decision.kind).toBe('filter');
    expect(body.predicate.sql).toContain('user_id');
    expect(body.row).toMatchObject({ value: false });
    expect(body.rls_ddl === null).toBe(ctx().kind !== 'postgres');
    expectError(
      await http.post(
        '/_/api/explain',
        { caller: { kind: 'admin' }, table: 'nope', action: 'read' },
        admin.auth,
      ),
      404,
      'unknown_table',
    );
  });

  it('tries a read and a rolled-back write as a caller', async () => {
    const { http, admin, alice, bob } = ctx();
    await setPolicies(ctx(), [
      { table_name: 'notes', action: 'read', expression: 'user_id = auth_user.id' },
      { table_name: 'notes', action: 'create', expression: 'user_id = auth_user.id' },
    ]);
    await resetRows(
      ctx(),
      'notes',
      ['id', 'user_id', 'body'],
      [
        [1, alice.id, 'a'],
        [2, bob.id, 'b'],
      ],
    );
    const asAlice = { kind: 'user', ref: alice.username };
    const read = await http.post(
      '/_/api/try',
      { caller: asAlice, method: 'GET', table: 'notes', query: 'select=id' },
      admin.auth,
    );
    expect(read.json).toEqual({ status: 200, body: [{ id: 1 }], rolled_back: false });
    const write = await http.post(
      '/_/api/try',
      {
        caller: asAlice,
        method: 'POST',
        table: 'notes',
        query: 'select=user_id,body',
        body: { id: 3, user_id: alice.id, body: 'c' },
      },
      admin.auth,
    );
    expect(write.json).toEqual({ status: 201, body: [{ user_id: alice.id, body: 'c' }], rolled_back: true });
    const refused = await http.post(
      '/_/api/try',
      { caller: asAlice, method: 'POST', table: 'notes', body: { id: 4, user_id: bob.id, body: 'd' } },
      admin.auth,
    );
    expect(refused.json).toMatchObject({ status: 403, rolled_back: true });
    const anonymous = await http.post(
      '/_/api/try',
      { caller: { kind: 'anonymous' }, method: 'GET', table: 'notes' },
      admin.auth,
    );
    expect(anonymous.json).toMatchObject({ status: 401, body: { error: { code: 'unauthenticated' } } });
    expect((await tableRows(ctx(), 'notes', ['id'])).map((r) => Number(r['id']))).toEqual([1, 2]);
  });

  it('gives each table the columns a caller may read and write once column rules exist', async () => {
    const { http, admin, alice } = ctx();
    await setPolicies(ctx(), []);
    const matrixFor = async (): Promise<MatrixBody> => {
      const reply = await http.post(
        '/_/api/matrix',
        { caller: { kind: 'user', ref: alice.username } },
        admin.auth,
      );
      expect(reply.status, reply.text).toBe(200);
      return reply.json as MatrixBody;
    };
    // No stored row has a column rule: nothing about columns.
    expect((await matrixFor()).tables.every((t) => t.column_access === undefined)).toBe(true);
    const added = await http.post(
      '/auth_policies',
      [
        { table_name: 'notes', action: 'read', expression: 'user_id = auth_user.id', description: 'own' },
        { table_name: 'notes', action: 'read', expression: '', columns: 'id, user_id', description: 'ids' },
      ],
      admin.auth,
    );
    expect(added.status, added.text).toBe(201);
    const ownId = (added.json as Array<{ id: number }>)[0]?.id;
    const notes = (await matrixFor()).tables.find((t) => t.table === 'notes');
    expect(notes?.column_access?.read).toEqual({
      denied: false,
      readable: ['id', 'user_id'],
      masked: [{ column: 'body', when: 'user_id = auth_user.id', policy_ids: [ownId] }],
      hidden: [],
    });
    await setPolicies(ctx(), []);
  });

  it('is not served with -http.console off', async () => {
    const { config, admin } = ctx();
    const off = await startTestServer({ ...config, http: { ...config.http, console: false } });
    try {
      const reply = await client(off.url).post(
        '/_/api/matrix',
        { caller: { kind: 'anonymous' } },
        admin.auth,
      );
      expectError(reply, 404, 'not_found');
    } finally {
      await off.handle.close();
    }
  });
});

// `/_` is the console's: a table named `_` is reached at /rest/v1/_ while it is on, and the
// server says so at start-up and in its answers, never silently.
for (const kind of ['sqlite', 'postgres'] as const) {
  describe.skipIf(!isAvailable(kind))(`a table named _ while the console is on [${kind}]`, () => {
    let ctx: PolicyContext | undefined;
    beforeAll(async () => {
      const key = kind === 'sqlite' ? 'id INTEGER PRIMARY KEY' : 'id serial PRIMARY KEY';
      const ddl = `${key}, user_id integer, body text`;
      const table = [`CREATE TABLE "_" (${ddl})`];
      ctx = await startAuthSuite(kind, { ddl: { sqlite: table, postgres: table, mysql: [] } });
    });
    afterAll(async () => {
      await ctx?.server.handle.close();
      await ctx?.sql.close();
      await ctx?.db.drop();
    });

    it('warns at start-up and answers requests meant for the table with where to find it', async () => {
      if (ctx === undefined) throw new Error('the suite did not start');
      const { server, http, admin, config } = ctx;
      expect(server.log.lines).toContainEqual(
        expect.objectContaining({ level: 40, table: '_', msg: expect.stringContaining('/rest/v1/_') }),
      );
      for (const reply of [
        await http.post('/_', { body: 'x' }, admin.auth),
        await http.get('/_?select=body', admin.auth),
      ]) {
        expectError(reply, 404, 'not_found');
        expect(reply.text).toContain('/rest/v1/_');
      }
      const post = await http.post('/_/', { body: 'x' }, admin.auth);
      expectError(post, 405, 'method_not_allowed');
      expect(post.text).toContain('/rest/v1/_');
      // A browser's GET /_ still opens the console.
      const page = await fetch(`${server.url}/_`, { redirect: 'manual' });
      expect([page.status, page.headers.get('location')]).toEqual([308, '/_/']);
      const created = await http.post('/rest/v1/_', { body: 'stored', user_id: admin.id }, admin.auth);
      expect(created.status, created.text).toBe(201);
      const rows = await http.get('/rest/v1/_?select=body', admin.auth);
      expect(rows.json).toEqual([{ body: 'stored' }]);
      // With the console off the path is the table's again, and nothing is said about it.
      const off = await startTestServer({ ...config, http: { ...config.http, console: false } });
      try {
        expect((await client(off.url).get('/_?select=body', admin.auth)).json).toEqual([{ body: 'stored' }]);
        expect(off.log.lines.filter((l) => l['table'] === '_')).toEqual([]);
      } finally {
        await off.handle.close();
      }
    });
  });
}
