// Column rules (docs/policy-language.md, `columns` of a policy row) over real HTTP on every
// database, PostgreSQL with native RLS and without, in both dialects (/<table> and /rest/v1): an
// email readable by its owner and admins and masked (null) for other users, a note hidden from
// everyone but admins, keys refused on writes (protected_column), filters that see the masked
// value, and answers of writes shown through the read rules.

import { beforeEach, describe, expect, it } from 'vitest';
import type { DialectName } from '../../../compiler/types.js';
import { requestRoleName } from '../../../runtime/rls/request-role.js';
import type { Reply } from '../../support/http.js';
import {
  expectStatus,
  forEachAuthDatabase,
  replacePolicies,
  resetRows,
  tableRows,
  type PolicyContext,
} from './policy-support.js';

const DDL: Readonly<Record<DialectName, readonly string[]>> = {
  postgres: [
    'CREATE TABLE people (id serial PRIMARY KEY, user_id integer, name varchar(40), email varchar(40) UNIQUE, note varchar(40), internal varchar(40))',
    ...['typed', 'typed_plain'].map(
      (t) =>
        `CREATE TABLE ${t} (id integer PRIMARY KEY, user_id integer, done boolean, price numeric(10,2), data jsonb, at timestamptz)`,
    ),
  ],
  mysql: [
    'CREATE TABLE people (id int AUTO_INCREMENT PRIMARY KEY, user_id int, name varchar(40), email varchar(40) UNIQUE, note varchar(40), internal varchar(40))',
    ...['typed', 'typed_plain'].map(
      (t) =>
        `CREATE TABLE ${t} (id int PRIMARY KEY, user_id int, done boolean, price decimal(10,2), data json, at datetime)`,
    ),
  ],
  sqlite: [
    'CREATE TABLE people (id INTEGER PRIMARY KEY AUTOINCREMENT, user_id INTEGER, name varchar(40), email varchar(40) UNIQUE, note varchar(40), internal varchar(40))',
    ...['typed', 'typed_plain'].map(
      (t) =>
        `CREATE TABLE ${t} (id INTEGER PRIMARY KEY, user_id INTEGER, done boolean, price decimal(10,2), data json, at datetime)`,
    ),
  ],
};

const POLICIES = [
  // Reads: owners see their rows but the note, admins everything but the internal column (no
  // request reads it), logged-in users every row's id, user_id and name, anonymous users ids and
  // names.
  {
    table_name: 'people',
    action: 'read',
    expression: 'user_id = auth_user.id',
    columns: '* except (note, internal)',
  },
  { table_name: 'people', action: 'read', expression: 'auth_user.is_admin', columns: '* except (internal)' },
  {
    table_name: 'people',
    action: 'read',
    expression: 'auth_user.is_authenticated',
    columns: 'id, user_id, name',
  },
  { table_name: 'people', action: 'read', expression: 'true', columns: 'id, name' },
  {
    table_name: 'people',
    action: 'read_mine',
    expression: 'user_id = auth_user.id',
    columns: '* except (internal)',
  },
  // Writes: anyone creates a name, logged-in users also id, user_id and email; names of every
  // row, ids and emails of one's own rows; owners delete.
  { table_name: 'people', action: 'create', expression: 'true', columns: 'name' },
  {
    table_name: 'people',
    action: 'create',
    expression: 'auth_user.is_authenticated',
    columns: 'id, user_id, name, email',
  },
  {
    table_name: 'people',
    action: 'update',
    expression: 'user_id = auth_user.id',
    columns: 'id, name, email',
  },
  { table_name: 'people', action: 'update', expression: 'auth_user.is_authenticated', columns: 'name' },
  { table_name: 'people', action: 'delete', expression: 'user_id = auth_user.id', columns: null },
  // Typed values: `typed` masks every typed column outside the caller's rows; `typed_plain`, the
  // same rows, has no column rule.
  { table_name: 'typed', action: 'read', expression: 'user_id = auth_user.id', columns: null },
  { table_name: 'typed', action: 'read', expression: 'true', columns: 'id, user_id' },
  { table_name: 'typed', action: 'update', expression: 'true', columns: 'done' },
  { table_name: 'typed_plain', action: 'read', expression: 'true', columns: null },
];

const TYPED_COLUMNS = ['id', 'user_id', 'done', 'price', 'data', 'at'];

const COLUMNS = ['id', 'user_id', 'name', 'email', 'note', 'internal'];

/** The seed dialect's error code, or the one PostgREST's `details` starts with. */
function errorCode(reply: Reply): unknown {
  const body = reply.json as { error?: { code?: unknown }; details?: unknown } | undefined;
  if (body?.error !== undefined) return body.error.code;
  return typeof body?.details === 'string' ? body.details.split(':')[0] : undefined;
}

function expectRefused(reply: Reply, status: number, code: string): void {
  expect({ status: reply.status, code: errorCode(reply) }, reply.text).toEqual({ status, code });
}

const byId = (reply: Reply): Array<Record<string, unknown>> =>
  (reply.json as Array<Record<string, unknown>>)
    .map((r) => ({ ...r, id: Number(r['id']), ...('user_id' in r ? { user_id: Number(r['user_id']) } : {}) }))
    .sort((a, b) => Number(a['id']) - Number(b['id']));

const DIALECTS = [
  { name: 'seed', base: '' },
  { name: 'postgrest', base: '/rest/v1' },
] as const;

forEachAuthDatabase(
  'column rules',
  (ctx) => {
    const stored = () => tableRows(ctx(), 'people', COLUMNS);
    const as = (c: PolicyContext, who: 'alice' | 'bob' | 'admin' | 'anonymous', prefer?: string) => ({
      headers: {
        ...(who === 'anonymous' ? {} : c[who].auth.headers),
        ...(prefer === undefined ? {} : { Prefer: prefer }),
      },
    });

    beforeEach(async () => {
      const c = ctx();
      const added = await replacePolicies(c, []);
      expect(added).toBeUndefined();
      const answer = await c.http.post(
        '/auth_policies',
        POLICIES.map((p) => ({ ...p, description: 'column rules' })),
        c.admin.auth,
      );
      expect(answer.status, answer.text).toBe(201);
      await resetRows(c, 'people', COLUMNS, [
        [1, c.alice.id, 'alice', 'alice@example.com', 'a note', 'i1'],
        [2, c.bob.id, 'bob', 'bob@example.com', 'b note', 'i2'],
      ]);
    });

    describe.each(DIALECTS)('$name dialect', ({ base }) => {
      const path = `${base}/people`;

      it('shows a masked value as the column type reads it: the same as a read without rules', async () => {
        const c = ctx();
        const rows = [
          [1, c.alice.id, true, 12.5, '{"tags": ["a", "b"], "n": 1}', '2024-01-02 03:04:05'],
          [2, c.bob.id, false, 7, '[1, 2]', '2024-02-03 04:05:06'],
        ] as const;
        await resetRows(c, 'typed', TYPED_COLUMNS, rows);
        await resetRows(c, 'typed_plain', TYPED_COLUMNS, rows);
        const masked = await c.http.get(`${base}/typed?order=id`, as(c, 'alice'));
        const plain = await c.http.get(`${base}/typed_plain?order=id`, as(c, 'alice'));
        expect([masked.status, plain.status], masked.text).toEqual([200, 200]);
        const [mine, theirs] = masked.json as Array<Record<string, unknown>>;
        const [plainMine] = plain.json as Array<Record<string, unknown>>;
        expect(mine).toEqual(plainMine);
        expect(mine).toMatchObject({ done: true, data: { tags: ['a', 'b'], n: 1 } });
        expect(theirs).toMatchObject({ done: null, price: null, data: null, at: null });
        // A filter on a masked typed column compares the typed value.
        const done = await c.http.get(`${base}/typed?done=eq.true&select=id`, as(c, 'alice'));
        expect(byId(done)).toEqual([{ id: 1 }]);
      });

      it('masks email outside the owner rows, hides note, and shows everything to an admin', async () => {
        const c = ctx();
        const alice = await c.http.get(`${path}?order=id`, as(c, 'alice'));
        expect(alice.status, alice.text).toBe(200);
        expect(byId(alice)).toEqual([
          { id: 1, user_id: c.alice.id, name: 'alice', email: 'alice@example.com' },
          { id: 2, user_id: c.bob.id, name: 'bob', email: null },
        ]);
        expect(byId(await c.http.get(`${path}?order=id`, as(c, 'anonymous')))).toEqual([
          { id: 1, name: 'alice' },
          { id: 2, name: 'bob' },
        ]);
        const admin = byId(await c.http.get(`${path}?order=id`, as(c, 'admin')));
        expect(admin.map((r) => [r['email'], r['note']])).toEqual([
          ['alice@example.com', 'a note'],
          ['bob@example.com', 'b note'],
        ]);
      });

      it.each([
        ['alice', 'select=id,note', 403],
        ['alice', 'note=eq.b%20note', 403],
        ['alice', 'order=note', 403],
        ['anonymous', 'select=email', 401],
        ['anonymous', 'email=is.null', 401],
      ] as const)('refuses %s naming a hidden column (%s)', async (who, query, status) => {
        const c = ctx();
        expectRefused(await c.http.get(`${path}?${query}`, as(c, who)), status, 'hidden_column');
      });

      it('filters and orders on the masked value, so a filter is no oracle', async () => {
        const c = ctx();
        const hit = await c.http.get(`${path}?email=eq.bob@example.com`, as(c, 'alice'));
        expect(hit.json).toEqual([]);
        const nulls = await c.http.get(`${path}?email=is.null&select=id`, as(c, 'alice'));
        expect(byId(nulls)).toEqual([{ id: 2 }]);
        const ordered = await c.http.get(`${path}?select=id&order=email.desc.nullslast`, as(c, 'alice'));
        expect((ordered.json as Array<{ id: unknown }>).map((r) => Number(r.id))).toEqual([1, 2]);
        // A write's filters see the same masked value: nothing matches, nothing changes.
        const patched = await c.http.patch(
          `${path}?email=eq.bob@example.com`,
          { name: 'renamed' },
          as(c, 'alice', 'return=representation'),
        );
        expect(patched.status, patched.text).toBe(200);
        expectRefused(await c.http.delete(`${path}?note=eq.b%20note`, as(c, 'alice')), 403, 'hidden_column');
        expect((await stored()).map((r) => r['name'])).toEqual(['alice', 'bob']);
      });

      it.each([
        ['alice', 'post', { user_id: 0, name: 'x', note: 'n' }, 403],
        ['anonymous', 'post', { name: 'x', email: 'e' }, 401],
        ['alice', 'patch own', { note: 'n' }, 403],
        ['alice', 'patch own', { user_id: 0 }, 403],
        ['alice', 'patch other', { email: 'mine@example.com' }, 403],
      ] as const)('refuses %s a %s setting a column not granted to it', async (who, how, body, status) => {
        const c = ctx();
        const before = await stored();
        const reply =
          how === 'post'
            ? await c.http.post(path, body, as(c, who))
            : await c.http.patch(`${path}?id=eq.${how === 'patch own' ? 1 : 2}`, body, as(c, who));
        expectRefused(reply, status, 'protected_column');
        expect(await stored()).toEqual(before);
      });

      it('answers writes through the read rules', async () => {
        const c = ctx();
        const prefer = base === '' ? undefined : 'return=representation';
        const mine = await c.http.post(
          path,
          { user_id: c.alice.id, name: 'mine', email: 'm@example.com' },
          as(c, 'alice', prefer),
        );
        expect(mine.status, mine.text).toBe(201);
        const created = (Array.isArray(mine.json) ? mine.json[0] : mine.json) as Record<string, unknown>;
        expect(created).toMatchObject({ name: 'mine', email: 'm@example.com' });
        expect(created).not.toHaveProperty('note');
        const theirs = await c.http.post(
          path,
          { user_id: c.bob.id, name: 'theirs', email: 't@example.com' },
          as(c, 'alice', prefer),
        );
        const other = (Array.isArray(theirs.json) ? theirs.json[0] : theirs.json) as Record<string, unknown>;
        expect(other).toMatchObject({ name: 'theirs', email: null });
        const anonymous = await c.http.post(path, { name: 'anon' }, as(c, 'anonymous', prefer));
        expect(anonymous.status, anonymous.text).toBe(201);
        const anon = (Array.isArray(anonymous.json) ? anonymous.json[0] : anonymous.json) as Record<
          string,
          unknown
        >;
        expect(Object.keys(anon).sort()).toEqual(['id', 'name']);
        const renamed = await c.http.patch(
          `${path}?id=eq.2`,
          { name: 'bobby' },
          as(c, 'alice', 'return=representation'),
        );
        expect(renamed.status, renamed.text).toBe(200);
        const own = await c.http.patch(`${path}?id=eq.1`, { email: 'new@example.com' }, as(c, 'alice'));
        expect(own.status, own.text).toBeLessThan(300);
        expect((await stored()).map((r) => [r['name'], r['email']]).slice(0, 2)).toEqual([
          ['alice', 'new@example.com'],
          ['bobby', 'bob@example.com'],
        ]);
      });
    });

    it('answers a write with masked values read as their column types', async () => {
      const c = ctx();
      await resetRows(c, 'typed', TYPED_COLUMNS, [
        [1, c.alice.id, true, 12.5, '{"n": 1}', '2024-01-02 03:04:05'],
        [2, c.bob.id, true, 7, '[1, 2]', '2024-02-03 04:05:06'],
      ]);
      // RETURNING where the database has it, else the read-back of the written rows.
      const patched = await c.http.patch(
        '/rest/v1/typed?id=gte.1',
        { done: false },
        as(c, 'alice', 'return=representation'),
      );
      expect(patched.status, patched.text).toBe(200);
      expect(byId(patched).map((r) => [r['id'], r['done'], r['data']])).toEqual([
        [1, false, { n: 1 }],
        [2, null, null],
      ]);
    });

    it('refuses an upsert setting a column not granted to it, and merges one that is', async () => {
      const c = ctx();
      const merge = as(c, 'alice', 'resolution=merge-duplicates,return=representation');
      expectRefused(
        await c.http.post('/rest/v1/people', [{ id: 1, name: 'x', note: 'n' }], merge),
        403,
        'protected_column',
      );
      const merged = await c.http.post('/rest/v1/people', [{ id: 1, name: 'merged' }], merge);
      expect(merged.status, merged.text).toBe(201);
      expect(merged.json).toEqual([
        { id: 1, user_id: c.alice.id, name: 'merged', email: 'alice@example.com' },
      ]);
      expectStatus(await c.http.get('/people?select=note', c.alice.auth), 403, 'hidden_column');
    });

    it('meets an upsert on a masked conflict column only where the caller reads the value', async () => {
      const c = ctx();
      const upsert = (resolution: 'merge' | 'ignore', body: unknown, onConflict = 'email') =>
        c.http.post(
          `/rest/v1/people?on_conflict=${onConflict}`,
          body,
          as(c, 'alice', `resolution=${resolution}-duplicates,return=representation`),
        );
      const before = await stored();
      // Bob's email is masked for alice, though her update and read policies show his row: it is
      // not met, so the upsert inserts, and the unique key refuses it as it refuses a POST.
      expectRefused(
        await upsert('merge', [{ email: 'bob@example.com', name: 'found' }]),
        403,
        'policy_check_failed',
      );
      expectRefused(
        await upsert('ignore', [{ email: 'bob@example.com', name: 'found' }]),
        409,
        'unique_violation',
      );
      expectRefused(
        await c.http.post('/rest/v1/people', [{ email: 'bob@example.com', name: 'found' }], as(c, 'alice')),
        409,
        'unique_violation',
      );
      expect(await stored()).toEqual(before);
      // Her own email she reads: met and merged, or left as it is.
      const merged = await upsert('merge', [{ email: 'alice@example.com', name: 'merged' }]);
      expect(merged.status, merged.text).toBe(201);
      expect(merged.json).toEqual([
        { id: 1, user_id: c.alice.id, name: 'merged', email: 'alice@example.com' },
      ]);
      const ignored = await upsert('ignore', [{ email: 'alice@example.com', name: 'ignored' }]);
      expect(ignored.status, ignored.text).toBe(201);
      expect(ignored.json).toEqual([]);
      // A hidden conflict column is refused by name.
      expectRefused(await upsert('merge', [{ id: 2, name: 'x' }], 'note'), 403, 'hidden_column');
      expect((await stored()).map((r) => r['name'])).toEqual(['merged', 'bob']);
    });

    it('masks the answers of writes to auth_policies as those of any table', async () => {
      const c = ctx();
      // Alice may write policies; she reads the descriptions of those for people only.
      const rules = await c.http.post(
        '/auth_policies',
        [
          { table_name: 'auth_policies', action: 'all', expression: 'auth_user.is_admin' },
          { table_name: 'auth_policies', action: 'read', expression: 'auth_user.is_admin' },
          { table_name: 'auth_policies', action: 'read', expression: "table_name = 'people'" },
          {
            table_name: 'auth_policies',
            action: 'read',
            expression: 'auth_user.is_authenticated',
            columns: 'id, table_name, action, expression',
          },
          { table_name: 'auth_policies', action: 'create', expression: 'auth_user.is_authenticated' },
          { table_name: 'auth_policies', action: 'update', expression: 'auth_user.is_authenticated' },
        ].map((p) => ({ ...p, description: 'policy writers' })),
        c.admin.auth,
      );
      expect(rules.status, rules.text).toBe(201);
      const written = await c.http.post(
        '/auth_policies',
        [
          { table_name: 'people', action: 'delete', expression: 'false', description: 'shown' },
          { table_name: 'all', action: 'delete', expression: 'false', description: 'masked' },
        ],
        c.alice.auth,
      );
      expect(written.status, written.text).toBe(201);
      const rows = written.json as Array<Record<string, unknown>>;
      expect(rows.map((r) => [r['table_name'], r['description']])).toEqual([
        ['people', 'shown'],
        ['all', null],
      ]);
      const patched = await c.http.patch(
        `/rest/v1/auth_policies?id=eq.${String(rows[1]?.['id'])}`,
        { expression: 'auth_user.is_admin' },
        as(c, 'alice', 'return=representation'),
      );
      expect(patched.status, patched.text).toBe(200);
      expect(patched.json).toEqual([
        expect.objectContaining({ table_name: 'all', expression: 'auth_user.is_admin', description: null }),
      ]);
      // The stored row is still judged, as stored: a patch that leaves it naming a missing column.
      const refused = await c.http.patch(
        `/auth_policies/${String(rows[1]?.['id'])}`,
        { table_name: 'people', expression: 'nosuch = 1' },
        c.alice.auth,
      );
      expect(refused.status, refused.text).toBe(400);
      const stored = await c.http.get(`/auth_policies?id=eq.${String(rows[1]?.['id'])}`, c.admin.auth);
      expect(stored.json).toEqual([
        expect.objectContaining({
          table_name: 'all',
          expression: 'auth_user.is_admin',
          description: 'masked',
        }),
      ]);
    });

    it('withholds a column no request reads from the native request role', async () => {
      const c = ctx();
      expectStatus(await c.http.get('/people?select=internal', c.admin.auth), 403, 'hidden_column');
      if (c.kind !== 'postgres' || !c.config.db.rls) return;
      // The policies above were written through the API: the next request reconciled them.
      expect((await c.http.get('/people', c.alice.auth)).status).toBe(200);
      const role = requestRoleName(c.db.name);
      const privileges = await c.sql.rows(
        `SELECT attname, has_column_privilege('${role}', 'people', attname, 'SELECT') AS readable
         FROM pg_attribute WHERE attrelid = 'people'::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`,
      );
      expect(privileges.map((r) => [r['attname'], r['readable']])).toEqual([
        ['id', true],
        ['user_id', true],
        ['name', true],
        ['email', true],
        ['note', true],
        ['internal', false],
      ]);
    });
  },
  { ddl: DDL },
);
