// Every row of the seed's default policies (docs/authentication.md), through real HTTP on each database.

import { beforeEach, expect, it } from 'vitest';
import { expectError } from './matrix.js';
import { expectStatus, forEachAuthDatabase, idsOf, resetRows, tableRows } from './policy-support.js';

forEachAuthDatabase('default policies', (ctx) => {
  beforeEach(async () => {
    const { alice, bob } = ctx();
    await resetRows(
      ctx(),
      'notes',
      ['id', 'user_id', 'body'],
      [
        [1, alice.id, 'alice 1'],
        [2, alice.id, 'alice 2'],
        [3, bob.id, 'bob 1'],
        [4, null, 'nobody'],
      ],
    );
  });

  const notes = () => tableRows(ctx(), 'notes', ['id', 'user_id', 'body']);

  // Row 1: auth_users — all — auth_user.is_admin
  it('auth_users: the admin lists users without any password or key column', async () => {
    const reply = await ctx().http.get('/auth_users?order=id', ctx().admin.auth);
    expect(reply.status).toBe(200);
    const rows = reply.json as Array<Record<string, unknown>>;
    expect(rows.map((r) => r['username'])).toEqual(['admin', 'alice', 'bob']);
    for (const row of rows) expect(Object.keys(row).sort()).toEqual(['id', 'is_admin', 'username']);
    expect(reply.text).not.toContain('$2');
  });

  it.each([
    ['GET', '/auth_users'],
    ['GET', '/auth_users?count'],
    ['POST', '/auth_users'],
    ['PATCH', '/auth_users?id=gt.0'],
    ['DELETE', '/auth_users?id=gt.0'],
  ])('auth_users: %s %s → 401 anonymous, 403 for a user, nothing changed', async (method, path) => {
    const { http, alice, sql } = ctx();
    const before = await sql.rows('SELECT id, username, password, is_admin FROM auth_users ORDER BY id');
    const json =
      method === 'POST' || method === 'PATCH' ? { username: 'eve', password: 'password123' } : undefined;
    expectStatus(await http.call(method, path, json === undefined ? {} : { json }), 401);
    expectError(
      await http.call(method, path, { ...alice.auth, ...(json === undefined ? {} : { json }) }),
      403,
      'forbidden',
    );
    expect(await sql.rows('SELECT id, username, password, is_admin FROM auth_users ORDER BY id')).toEqual(
      before,
    );
  });

  // Row 2: auth_policies — all — auth_user.is_admin
  it('auth_policies: the admin reads the defaults; anonymous 401; a user 403', async () => {
    const { http, admin, alice } = ctx();
    const reply = await http.get('/auth_policies?id=lte.3&order=id&select=table_name,expression', admin.auth);
    expect(reply.json).toEqual([
      { table_name: 'auth_users', expression: 'auth_user.is_admin' },
      { table_name: 'auth_policies', expression: 'auth_user.is_admin' },
      { table_name: 'all', expression: 'user_id = auth_user.id' },
    ]);
    expectStatus(await http.get('/auth_policies'), 401);
    expectError(await http.get('/auth_policies', alice.auth), 403, 'forbidden');
    expectError(
      await http.post(
        '/auth_policies',
        { table_name: 'notes', action: 'read', expression: '', description: 'x' },
        alice.auth,
      ),
      403,
      'forbidden',
    );
    expect(await ctx().sql.count('auth_policies')).toBe(3);
  });

  // Row 3: all — all — user_id = auth_user.id
  it('read: each user sees exactly their own rows; anonymous → 401', async () => {
    const { http, alice, bob } = ctx();
    expect(idsOf(await http.get('/notes', alice.auth))).toEqual([1, 2]);
    expect(idsOf(await http.get('/notes', bob.auth))).toEqual([3]);
    const anonymous = await http.get('/notes');
    expectError(anonymous, 401, 'unauthenticated');
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it('read: the admin has no bypass under the owner rule', async () => {
    expect(idsOf(await ctx().http.get('/notes', ctx().admin.auth))).toEqual([]);
  });

  it('read_mine (?mine) follows the same rule', async () => {
    expect(idsOf(await ctx().http.get('/notes?mine', ctx().alice.auth))).toEqual([1, 2]);
    expectStatus(await ctx().http.get('/notes?mine'), 401);
  });

  it('count and single rows respect the rule: another user’s row is 404', async () => {
    const { http, alice } = ctx();
    expect((await http.get('/notes?count', alice.auth)).json).toEqual({ count: 2 });
    expect((await http.get('/notes/1', alice.auth)).json).toEqual({
      id: 1,
      user_id: alice.id,
      body: 'alice 1',
    });
    expectError(await http.get('/notes/3', alice.auth), 404, 'not_found');
  });

  it('create: the owner column is filled with the user id', async () => {
    const { http, alice } = ctx();
    const reply = await http.post('/notes', { body: 'new' }, alice.auth);
    expect(reply.status, reply.text).toBe(201);
    expect(reply.json).toMatchObject({ user_id: alice.id, body: 'new' });
    expect((await notes()).filter((r) => r['body'] === 'new')).toEqual([
      { id: expect.any(Number), user_id: alice.id, body: 'new' },
    ]);
  });

  it('create: another user id → 403, nothing written (arrays are all-or-nothing)', async () => {
    const { http, alice, bob } = ctx();
    const before = await notes();
    expectError(await http.post('/notes', { body: 'x', user_id: bob.id }, alice.auth), 403, 'owner_mismatch');
    expectError(
      await http.post('/notes', [{ body: 'ok' }, { body: 'x', user_id: bob.id }], alice.auth),
      403,
      'owner_mismatch',
    );
    expectError(await http.post('/notes', { body: 'x', user_id: null }, alice.auth), 403, 'owner_mismatch');
    expectStatus(await http.post('/notes', { body: 'x' }), 401);
    expect(await notes()).toEqual(before);
  });

  it('update: own rows change; another user’s row by key is 404; a filter reaches only own rows', async () => {
    const { http, alice } = ctx();
    expect((await http.patch('/notes/1', { body: 'edited' }, alice.auth)).json).toEqual({ updated: 1 });
    expectError(await http.patch('/notes/3', { body: 'hacked' }, alice.auth), 404, 'not_found');
    expect((await http.patch('/notes?id=gt.0', { body: 'all mine' }, alice.auth)).json).toEqual({
      updated: 2,
    });
    expect(await notes()).toEqual([
      { id: 1, user_id: alice.id, body: 'all mine' },
      { id: 2, user_id: alice.id, body: 'all mine' },
      { id: 3, user_id: ctx().bob.id, body: 'bob 1' },
      { id: 4, user_id: null, body: 'nobody' },
    ]);
  });

  it('update: giving a row away (changing user_id) → 403, nothing written', async () => {
    const { http, alice, bob } = ctx();
    const before = await notes();
    expectError(await http.patch('/notes/1', { user_id: bob.id }, alice.auth), 403, 'policy_check_failed');
    expectError(
      await http.put('/notes?id=gt.0', { user_id: bob.id }, alice.auth),
      403,
      'policy_check_failed',
    );
    expect(await notes()).toEqual(before);
  });

  it('delete: own rows only; another user’s row by key is 404', async () => {
    const { http, alice } = ctx();
    expectError(await http.delete('/notes/3', alice.auth), 404, 'not_found');
    expect((await http.delete('/notes?id=gt.0', alice.auth)).json).toEqual({ deleted: 2 });
    expect((await notes()).map((r) => r['id'])).toEqual([3, 4]);
    expectStatus(await http.delete('/notes/3'), 401);
  });

  it('a table without user_id → 403 naming the column for a user, 401 for anonymous', async () => {
    const { http, alice, admin } = ctx();
    const reply = await http.get('/plain', alice.auth);
    expectError(reply, 403, 'policy_column_missing', { table: 'plain', column: 'user_id' });
    expect((reply.json as { error: { message: string } }).error.message).toContain('user_id');
    expectError(await http.post('/plain', { body: 'x' }, admin.auth), 403, 'policy_column_missing', {
      table: 'plain',
      column: 'user_id',
    });
    expectStatus(await http.get('/plain'), 401);
    expect(await ctx().sql.count('plain')).toBe(0);
  });
});
