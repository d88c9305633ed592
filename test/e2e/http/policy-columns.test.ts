// `auth_policies.columns` (docs/authentication.md): a database set up by the previous version gains
// the column in place when a server starts, every stored row kept with NULL (every column); writes
// through both dialects validate the rule like the expression and answer it.

import { expect, it } from 'vitest';
import { rollBackPolicyColumns } from '../../support/auth-history.js';
import { startTestServer } from '../../support/server.js';
import { expectError } from './matrix.js';
import { forEachAuthDatabase, replacePolicies } from './policy-support.js';

const POLICY_FIELDS = 'id, table_name, action, expression, description';

forEachAuthDatabase('policy columns', (ctx) => {
  it('a database set up by the previous version gains auth_policies.columns, keeping every row', async () => {
    const { sql, kind, config } = ctx();
    await replacePolicies(ctx(), [
      { table_name: 'notes', action: 'read', expression: 'user_id = auth_user.id' },
    ]);
    const before = await sql.rows(`SELECT ${POLICY_FIELDS} FROM auth_policies ORDER BY id`);
    expect(before).toHaveLength(4);
    await rollBackPolicyColumns(sql, kind);
    await expect(sql.rows('SELECT columns FROM auth_policies')).rejects.toThrow();
    const again = await startTestServer(config);
    try {
      expect(await sql.rows(`SELECT ${POLICY_FIELDS} FROM auth_policies ORDER BY id`)).toEqual(before);
      const stored = await sql.rows('SELECT columns FROM auth_policies ORDER BY id');
      expect(stored).toEqual(before.map(() => ({ columns: null })));
    } finally {
      await again.handle.close();
    }
  });
});

interface StoredPolicy {
  readonly id: number;
  readonly columns: string | null;
}

forEachAuthDatabase('/auth_policies columns', (ctx) => {
  const policy = (table_name: string, columns: unknown): Record<string, unknown> => ({
    table_name,
    action: 'read',
    expression: '',
    description: 'column rule',
    columns,
  });
  const count = (): Promise<number> => ctx().sql.count('auth_policies');

  it('stores a valid rule as written and answers it in POST and GET; every column is NULL', async () => {
    const { http, admin } = ctx();
    const created = await http.post(
      '/auth_policies',
      [policy('notes', 'id, body'), policy('notes', ' * '), policy('all', '* except (secret_note)')],
      admin.auth,
    );
    expect(created.status, created.text).toBe(201);
    const rows = created.json as StoredPolicy[];
    expect(rows.map((r) => r.columns)).toEqual(['id, body', null, '* except (secret_note)']);
    const first = rows[0]?.id ?? 0;
    const read = await http.get(`/auth_policies/${first}`, admin.auth);
    expect((read.json as StoredPolicy).columns).toBe('id, body');
    const listed = await http.get(`/auth_policies?id=gte.${first}&select=columns&order=id`, admin.auth);
    expect(listed.json).toEqual(rows.map((r) => ({ columns: r.columns })));
    const absent = await http.post(
      '/auth_policies',
      { ...policy('notes', null), columns: undefined },
      admin.auth,
    );
    expect((absent.json as StoredPolicy).columns).toBeNull();
  });

  it('refuses an unknown column or a syntax error with line:column, writing nothing', async () => {
    const { http, admin } = ctx();
    const before = await count();
    const unknown = await http.post('/auth_policies', policy('notes', 'id,\n  nope'), admin.auth);
    expectError(unknown, 400, 'invalid_policy', {
      field: 'columns',
      line: 2,
      column: 3,
      expected: "a column of table 'notes'",
      found: "'nope'",
    });
    expect((unknown.json as { error: { message: string } }).error.message).toBe(
      "columns: column 'nope' does not exist in table 'notes' at 2:3",
    );
    const syntax = await http.post(
      '/auth_policies',
      [policy('notes', 'id'), policy('notes', 'id,, body')],
      admin.auth,
    );
    expectError(syntax, 400, 'invalid_policy');
    expect((syntax.json as { error: { details: unknown } }).error.details).toMatchObject({
      field: 'columns',
      line: 1,
      column: 4,
    });
    // A number is refused as a value of the text column, before the rule is looked at.
    expectError(await http.post('/auth_policies', policy('notes', 7), admin.auth), 400, 'invalid_value');
    expect(await count()).toBe(before);
  });

  it('PATCH validates the rule against the row as stored and normalises `*` to NULL', async () => {
    const { http, admin } = ctx();
    const created = await http.post('/auth_policies', policy('notes', 'body'), admin.auth);
    const { id } = created.json as StoredPolicy;
    expectError(
      await http.patch(`/auth_policies/${id}`, { columns: 'title' }, admin.auth),
      400,
      'invalid_policy',
    );
    // The rule is checked against the table the row ends up with.
    expectError(
      await http.patch(`/auth_policies/${id}`, { table_name: 'posts' }, admin.auth),
      400,
      'invalid_policy',
    );
    expect((await http.get(`/auth_policies/${id}`, admin.auth)).json).toMatchObject({
      table_name: 'notes',
      columns: 'body',
    });
    expect(
      (await http.patch(`/auth_policies/${id}`, { columns: '* except (body)' }, admin.auth)).status,
    ).toBe(200);
    expect((await http.get(`/auth_policies/${id}`, admin.auth)).json).toMatchObject({
      columns: '* except (body)',
    });
    expect((await http.patch(`/auth_policies/${id}`, { columns: '*' }, admin.auth)).status).toBe(200);
    expect((await http.get(`/auth_policies/${id}`, admin.auth)).json).toMatchObject({ columns: null });
  });

  it('/rest/v1/auth_policies validates and stores the rule the same way', async () => {
    const { http, admin } = ctx();
    const representation = { headers: { ...admin.auth.headers, prefer: 'return=representation' } };
    const created = await http.post('/rest/v1/auth_policies', policy('posts', 'id, title'), representation);
    expect(created.status, created.text).toBe(201);
    expect(created.json).toMatchObject([{ table_name: 'posts', columns: 'id, title' }]);
    const before = await count();
    const refused = await http.post('/rest/v1/auth_policies', policy('posts', 'id, nope'), representation);
    expect(refused.status).toBe(400);
    expect(refused.text).toContain("column 'nope' does not exist in table 'posts'");
    expect(await count()).toBe(before);
  });
});
