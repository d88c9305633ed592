// docs/authentication.md username rules over HTTP, on every database: invisible characters (format,
// default-ignorable, zero-width, bidi) and a leading combining mark are refused by register, by
// creates through /auth_users and by renames through /auth_users alike, and nothing is written.

import { expect, it } from 'vitest';
import { expectError } from './matrix.js';
import { forEachAuthDatabase, tableRows } from './policy-support.js';

/** Names that would look like `admin` (or like nothing at all), with the rule and the character. */
const LOOKALIKES: ReadonlyArray<readonly [string, string, string]> = [
  ['adm\u034Fin', 'invisible', 'U+034F'],
  ['admin\u3164', 'invisible', 'U+3164'],
  ['ad\u2800min', 'blank', 'U+2800'],
  ['adm\u00A0in', 'blank', 'U+00A0'],
  ['\u3164', 'invisible', 'U+3164'],
  ['admin\uFE0F', 'invisible', 'U+FE0F'],
  ['ad\u17B4min', 'invisible', 'U+17B4'],
  ['ad\u00ADmin', 'invisible', 'U+00AD'],
  ['ad\u200Bmin', 'invisible', 'U+200B'],
  ['admin\u202Egpj', 'bidi', 'U+202E'],
  ['\u0301admin', 'combining', 'U+0301'],
];

forEachAuthDatabase('username rules', (ctx) => {
  it.each(LOOKALIKES)(
    'register %j → 400 invalid_username (%s %s), nothing written',
    async (username, reason, character) => {
      const { http, sql } = ctx();
      const before = await sql.count('auth_users');
      expectError(
        await http.post('/auth/register', { username, password: 'password123' }),
        400,
        'invalid_username',
        {
          field: 'username',
          reason,
          character,
        },
      );
      expect(await sql.count('auth_users')).toBe(before);
    },
  );

  it.each(LOOKALIKES)(
    'POST /auth_users %j → 400 invalid_username, nothing written',
    async (username, reason, character) => {
      const { http, sql, admin } = ctx();
      const before = await sql.count('auth_users');
      expectError(
        await http.post('/auth_users', { username, password: 'password123' }, admin.auth),
        400,
        'invalid_username',
        { field: 'username', reason, character },
      );
      expect(await sql.count('auth_users')).toBe(before);
    },
  );

  it.each(LOOKALIKES)(
    'renaming alice to %j through /auth_users → 400, her name unchanged',
    async (username, reason, character) => {
      const { http, admin, alice } = ctx();
      expectError(
        await http.patch(`/auth_users/${alice.id}`, { username }, admin.auth),
        400,
        'invalid_username',
        { field: 'username', reason, character },
      );
      expect(await tableRows(ctx(), 'auth_users', ['id', 'username'])).toContainEqual({
        id: alice.id,
        username: 'alice',
      });
    },
  );

  it('a lookalike of admin cannot log in with the admin password', async () => {
    const { http, admin } = ctx();
    expectError(
      await http.post('/auth/login', { username: 'adm\u034Fin', password: admin.password }),
      401,
      'invalid_credentials',
    );
  });

  it('marks after a base character are fine: register, rename and log in', async () => {
    const { http, admin } = ctx();
    const created = await http.post('/auth/register', {
      username: 'Zoe\u0308 नमस्ते',
      password: 'password123',
    });
    expect(created.status, created.text).toBe(201);
    const { id, username } = created.json as { id: number; username: string };
    expect(username).toBe('Zoë नमस्ते');
    const renamed = await http.patch(`/auth_users/${id}`, { username: 'q\u0307' }, admin.auth);
    expect(renamed.status, renamed.text).toBe(200);
    expect((await http.post('/auth/login', { username: 'q\u0307', password: 'password123' })).status).toBe(
      200,
    );
  });
});
