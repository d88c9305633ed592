// The floor on auth_users (docs/authentication.md) over real HTTP on every database: even under a policy that
// lets users update (and create) their own row, a non-admin never writes id, password or is_admin
// — 403 protected_column, nothing written — while an admin still may.

import { expect, it } from 'vitest';
import { expectError } from './matrix.js';
import { forEachAuthDatabase, setPolicies } from './policy-support.js';

forEachAuthDatabase('the floor on auth_users', (ctx) => {
  const users = () => ctx().sql.rows('SELECT id, username, password, is_admin FROM auth_users ORDER BY id');

  it('refuses a non-admin writing id, password or is_admin of their own row, under a policy that allows the write', async () => {
    const { http, alice } = ctx();
    await setPolicies(ctx(), [
      { table_name: 'auth_users', action: 'read', expression: 'id = auth_user.id or auth_user.is_admin' },
      { table_name: 'auth_users', action: 'update', expression: 'id = auth_user.id or auth_user.is_admin' },
      { table_name: 'auth_users', action: 'create', expression: 'auth_user.is_authenticated' },
    ]);
    const before = await users();
    for (const patch of [
      { is_admin: true },
      { password: 'a-new-password-1' },
      { id: 9999 },
      { username: 'x', is_admin: false },
    ]) {
      const reply = await http.patch(`/auth_users/${alice.id}`, patch, alice.auth);
      expectError(reply, 403, 'protected_column');
    }
    expectError(
      await http.post(
        '/auth_users',
        { username: 'sockpuppet', password: 'a-long-password', is_admin: true },
        alice.auth,
      ),
      403,
      'protected_column',
    );
    expect(await users()).toEqual(before);
    // What the policy allows outside the floor still works.
    expect(
      (await http.patch(`/auth_users/${alice.id}`, { username: `${alice.username}-renamed` }, alice.auth))
        .json,
    ).toEqual({
      updated: 1,
    });
    expect(
      (await http.patch(`/auth_users/${alice.id}`, { username: alice.username }, alice.auth)).status,
    ).toBe(200);
  });

  it('lets an admin write them', async () => {
    const { http, admin, bob } = ctx();
    await setPolicies(ctx(), [{ table_name: 'auth_users', action: 'all', expression: 'auth_user.is_admin' }]);
    expect((await http.patch(`/auth_users/${bob.id}`, { is_admin: true }, admin.auth)).json).toEqual({
      updated: 1,
    });
    expect((await http.patch(`/auth_users/${bob.id}`, { is_admin: false }, admin.auth)).json).toEqual({
      updated: 1,
    });
    const rows = await ctx().sql.rows(`SELECT is_admin FROM auth_users WHERE id = ${bob.id}`);
    expect(Boolean(rows[0]?.['is_admin'])).toBe(false);
  });
});
