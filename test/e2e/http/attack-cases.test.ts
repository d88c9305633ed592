// Attacks on auth and policies through real HTTP, on each database: forged and broken tokens,
// privilege escalation, owner-column changes, reading others' rows, injection and password
// reads. Each case checks the status and code AND that the database holds exactly what it held.

import { SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Reply } from '../../support/http.js';
import { expectError } from './matrix.js';
import {
  bearer,
  forEachAuthDatabase,
  idsOf,
  resetRows,
  setPolicies,
  tableRows,
  type PolicyContext,
} from './policy-support.js';

/** Everything an attack could change. */
async function snapshot(ctx: PolicyContext) {
  return {
    notes: await tableRows(ctx, 'notes', ['id', 'user_id', 'body']),
    users: await tableRows(ctx, 'auth_users', ['id', 'username', 'password', 'is_admin']),
    policies: await tableRows(ctx, 'auth_policies', [
      'id',
      'table_name',
      'action',
      'expression',
      'description',
    ]),
    tables: (await ctx.sql.count('notes')) + (await ctx.sql.count('posts')),
  };
}

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

interface Attack {
  readonly name: string;
  readonly run: (ctx: PolicyContext) => Promise<Reply>;
  readonly status: number;
  readonly code?: string;
  /** For reads that succeed: the ids the attacker may see. */
  readonly ids?: (ctx: PolicyContext) => readonly number[];
}

const write = (ctx: PolicyContext, headers: Readonly<Record<string, string>>) =>
  ctx.http.post('/notes', { body: 'planted' }, { headers });
const withToken = (token: string) => ({ authorization: `Bearer ${token}` });
const future = (s: number) => Math.floor(Date.now() / 1000) + s;

const TOKEN_ATTACKS: readonly Attack[] = [
  {
    name: 'a malformed token',
    run: (c) => write(c, withToken('abc.def')),
    status: 401,
    code: 'invalid_token',
  },
  {
    name: 'an empty bearer token',
    run: (c) => write(c, { authorization: 'Bearer ' }),
    status: 401,
    code: 'invalid_token',
  },
  {
    name: 'a Basic scheme',
    run: (c) => write(c, { authorization: 'Basic YWRtaW46YWRtaW4=' }),
    status: 401,
    code: 'invalid_token',
  },
  {
    name: 'a token without a scheme',
    run: async (c) => write(c, { authorization: c.alice.token }),
    status: 401,
    code: 'invalid_token',
  },
  {
    name: 'two tokens in one header',
    run: async (c) => write(c, { authorization: `Bearer ${c.alice.token} ${c.bob.token}` }),
    status: 401,
    code: 'invalid_token',
  },
  {
    name: 'alg none claiming to be the admin',
    run: (c) =>
      write(
        c,
        withToken(`${b64({ alg: 'none', typ: 'JWT' })}.${b64({ user_id: c.admin.id, is_admin: true })}.`),
      ),
    status: 401,
    code: 'invalid_token',
  },
  {
    name: 'HS512 signed with the right secret',
    run: async (c) => write(c, withToken(await c.mint({ user_id: c.alice.id }, { alg: 'HS512' }))),
    status: 401,
    code: 'invalid_token',
  },
  {
    name: 'a header claiming RS256 over an HMAC signature',
    run: async (c) => {
      const [, payload, signature] = c.alice.token.split('.');
      return write(c, withToken(`${b64({ alg: 'RS256', typ: 'JWT' })}.${payload}.${signature}`));
    },
    status: 401,
    code: 'invalid_token',
  },
  {
    name: 'is_admin promoted in a signed token’s payload',
    run: async (c) => {
      const [header, , signature] = c.alice.token.split('.');
      return c.http.get('/auth_users', {
        headers: withToken(`${header}.${b64({ user_id: c.alice.id, is_admin: true })}.${signature}`),
      });
    },
    status: 401,
    code: 'invalid_token',
  },
  {
    name: 'a stripped signature',
    run: async (c) => write(c, withToken(`${c.alice.token.split('.').slice(0, 2).join('.')}.`)),
    status: 401,
    code: 'invalid_token',
  },
  {
    name: 'an admin token signed with another secret',
    run: async (c) =>
      c.http.delete('/auth_policies?id=gt.0', {
        headers: withToken(await c.mint({ user_id: c.admin.id, is_admin: true }, { secret: 'x'.repeat(40) })),
      }),
    status: 401,
    code: 'invalid_token',
  },
  {
    name: 'an expired token (beyond the 30 s leeway)',
    run: async (c) => write(c, withToken(await c.mint({ user_id: c.alice.id }, { expiresIn: -60 }))),
    status: 401,
    code: 'invalid_token',
  },
  {
    name: 'a token not valid before a minute from now',
    run: async (c) =>
      write(
        c,
        withToken(
          await new SignJWT({ user_id: c.alice.id })
            .setProtectedHeader({ alg: 'HS256' })
            .setNotBefore(future(60))
            .sign(new TextEncoder().encode(c.secret)),
        ),
      ),
    status: 401,
    code: 'invalid_token',
  },
  {
    name: 'a token without user_id',
    run: async (c) => write(c, withToken(await c.mint({ is_admin: true }))),
    status: 401,
    code: 'invalid_token',
  },
  {
    name: 'a fractional user_id',
    run: async (c) => write(c, withToken(await c.mint({ user_id: 1.5 }))),
    status: 401,
    code: 'invalid_token',
  },
  {
    name: 'a user_id of "12a"',
    run: async (c) => write(c, withToken(await c.mint({ user_id: '12a' }))),
    status: 401,
    code: 'invalid_token',
  },
  {
    name: 'a null user_id',
    run: async (c) => write(c, withToken(await c.mint({ user_id: null }))),
    status: 401,
    code: 'invalid_token',
  },
  {
    name: 'is_admin as the string "true" grants nothing',
    run: async (c) =>
      c.http.get('/auth_users', bearer(await c.mint({ user_id: c.alice.id, is_admin: 'true' }))),
    status: 403,
    code: 'forbidden',
  },
];

const ESCALATION_ATTACKS: readonly Attack[] = [
  {
    name: 'register with is_admin',
    run: (c) => c.http.post('/auth/register', { username: 'eve', password: 'password123', is_admin: true }),
    status: 400,
    code: 'invalid_body',
  },
  {
    name: 'register with is_admin as a string',
    run: (c) => c.http.post('/auth/register', { username: 'eve', password: 'password123', is_admin: 'true' }),
    status: 400,
    code: 'invalid_body',
  },
  {
    name: 'register as ADMIN (case variant of the admin)',
    run: (c) => c.http.post('/auth/register', { username: 'ADMIN', password: 'password123' }),
    status: 409,
    code: 'username_taken',
  },
  {
    name: 'register as admin with a trailing space',
    run: (c) => c.http.post('/auth/register', { username: 'admin ', password: 'password123' }),
    status: 400,
    code: 'invalid_username',
  },
  {
    name: 'a user promotes themself by key',
    run: (c) => c.http.patch(`/auth_users/${c.alice.id}`, { is_admin: true }, c.alice.auth),
    status: 403,
    code: 'forbidden',
  },
  {
    name: 'a user promotes themself by filter',
    run: (c) => c.http.put(`/auth_users?username=eq.alice`, { is_admin: true }, c.alice.auth),
    status: 403,
    code: 'forbidden',
  },
  {
    name: 'a user creates an admin account',
    run: (c) =>
      c.http.post('/auth_users', { username: 'eve', password: 'password123', is_admin: true }, c.alice.auth),
    status: 403,
    code: 'forbidden',
  },
  {
    name: 'a user resets the admin password',
    run: (c) => c.http.patch(`/auth_users/${c.admin.id}`, { password: 'owned by alice' }, c.alice.auth),
    status: 403,
    code: 'forbidden',
  },
  {
    name: 'a user adds a public policy on auth_users',
    run: (c) =>
      c.http.post(
        '/auth_policies',
        { table_name: 'auth_users', action: 'all', expression: '', description: 'open' },
        c.alice.auth,
      ),
    status: 403,
    code: 'forbidden',
  },
  {
    name: 'a user rewrites a default policy',
    run: (c) => c.http.patch('/auth_policies/1', { expression: 'auth_user.is_authenticated' }, c.alice.auth),
    status: 403,
    code: 'forbidden',
  },
  {
    name: 'a user deletes every policy',
    run: (c) => c.http.delete('/auth_policies?id=gt.0', c.alice.auth),
    status: 403,
    code: 'forbidden',
  },
  {
    name: 'anonymous adds a policy',
    run: (c) =>
      c.http.post('/auth_policies', {
        table_name: 'notes',
        action: 'all',
        expression: '',
        description: 'open',
      }),
    status: 401,
    code: 'unauthenticated',
  },
  {
    name: 'an external token of an unknown user reads users',
    run: async (c) => c.http.get('/auth_users', bearer(await c.mint({ user_id: 424242 }))),
    status: 403,
    code: 'forbidden',
  },
];

const ADMIN_MISTAKES: readonly Attack[] = [
  {
    name: 'a policy that does not parse',
    run: (c) =>
      c.http.post(
        '/auth_policies',
        { table_name: 'notes', action: 'read', expression: 'user_id = = 1', description: 'x' },
        c.admin.auth,
      ),
    status: 400,
    code: 'invalid_policy',
  },
  {
    name: 'a policy with SQL in it',
    run: (c) =>
      c.http.post(
        '/auth_policies',
        {
          table_name: 'notes',
          action: 'read',
          expression: 'user_id = 1; DROP TABLE notes',
          description: 'x',
        },
        c.admin.auth,
      ),
    status: 400,
    code: 'invalid_policy',
  },
  {
    name: 'a policy on an unknown table',
    run: (c) =>
      c.http.post(
        '/auth_policies',
        { table_name: 'ghosts', action: 'read', expression: '', description: 'x' },
        c.admin.auth,
      ),
    status: 400,
    code: 'invalid_policy',
  },
  {
    name: 'a policy naming an unknown column',
    run: (c) =>
      c.http.post(
        '/auth_policies',
        { table_name: 'notes', action: 'read', expression: 'owner = auth_user.id', description: 'x' },
        c.admin.auth,
      ),
    status: 400,
    code: 'invalid_policy',
  },
  {
    name: 'a policy with an unknown action',
    run: (c) =>
      c.http.post(
        '/auth_policies',
        { table_name: 'notes', action: 'select', expression: '', description: 'x' },
        c.admin.auth,
      ),
    status: 400,
    code: 'invalid_policy',
  },
  {
    name: 'a policy with a 257-character description',
    run: (c) =>
      c.http.post(
        '/auth_policies',
        { table_name: 'notes', action: 'read', expression: '', description: 'd'.repeat(257) },
        c.admin.auth,
      ),
    // /auth_policies validation answers with the field's limit (docs/policy-language.md), before
    // the declared length of the column is checked.
    status: 400,
    code: 'invalid_policy',
  },
  {
    name: 'a policy reading the password hash',
    run: (c) =>
      c.http.post(
        '/auth_policies',
        { table_name: 'auth_users', action: 'read', expression: "password = 'x'", description: 'x' },
        c.admin.auth,
      ),
    status: 400,
    code: 'invalid_policy',
  },
  {
    name: 'an array of policies with one bad row',
    run: (c) =>
      c.http.post(
        '/auth_policies',
        [
          { table_name: 'notes', action: 'read', expression: '', description: 'ok' },
          { table_name: 'notes', action: 'read', expression: '(', description: 'bad' },
        ],
        c.admin.auth,
      ),
    status: 400,
    code: 'invalid_policy',
  },
  {
    name: 'an update that breaks a default policy',
    run: (c) => c.http.patch('/auth_policies/3', { expression: 'user_id = ' }, c.admin.auth),
    status: 400,
    code: 'invalid_policy',
  },
  {
    name: 'an update moving a policy to an unknown table',
    run: (c) => c.http.patch('/auth_policies/3', { table_name: 'ghosts' }, c.admin.auth),
    status: 400,
    code: 'invalid_policy',
  },
  {
    name: 'a user with a 7-byte password through /auth_users',
    run: (c) => c.http.post('/auth_users', { username: 'weak', password: '1234567' }, c.admin.auth),
    status: 400,
    code: 'invalid_password',
  },
  {
    name: 'a user with a bidi username through /auth_users',
    run: (c) => c.http.post('/auth_users', { username: 'ev\u202Ee', password: 'password123' }, c.admin.auth),
    status: 400,
    code: 'invalid_username',
  },
  {
    name: 'renaming alice to BOB (case-insensitive clash)',
    run: (c) => c.http.patch(`/auth_users/${c.alice.id}`, { username: 'BOB' }, c.admin.auth),
    status: 409,
  },
  {
    name: 'writing the hidden username key',
    run: (c) => c.http.patch(`/auth_users/${c.alice.id}`, { username_key: 'bob' }, c.admin.auth),
    status: 400,
    code: 'unknown_column',
  },
];

const OWNER_ATTACKS: readonly Attack[] = [
  {
    name: 'create a note owned by bob',
    run: (c) => c.http.post('/notes', { body: 'x', user_id: c.bob.id }, c.alice.auth),
    status: 403,
    code: 'owner_mismatch',
  },
  {
    name: 'create a note owned by bob, id as a string',
    run: (c) => c.http.post('/notes', { body: 'x', user_id: String(c.bob.id) }, c.alice.auth),
    status: 403,
    code: 'owner_mismatch',
  },
  {
    name: 'create a batch with one foreign row',
    run: (c) => c.http.post('/notes', [{ body: 'mine' }, { body: 'x', user_id: c.bob.id }], c.alice.auth),
    status: 403,
    code: 'owner_mismatch',
  },
  {
    name: 'create an ownerless note',
    run: (c) => c.http.post('/notes', { body: 'x', user_id: null }, c.alice.auth),
    status: 403,
    code: 'owner_mismatch',
  },
  {
    name: 'give my note to bob',
    run: (c) => c.http.patch('/notes/1', { user_id: c.bob.id }, c.alice.auth),
    status: 403,
    code: 'policy_check_failed',
  },
  {
    name: 'orphan my notes by filter',
    run: (c) => c.http.put('/notes?user_id=eq.' + c.alice.id, { user_id: null }, c.alice.auth),
    status: 403,
    code: 'policy_check_failed',
  },
  {
    name: 'edit bob’s note by key',
    run: (c) => c.http.patch('/notes/3', { body: 'hacked' }, c.alice.auth),
    status: 404,
    code: 'not_found',
  },
  {
    name: 'delete bob’s note by key',
    run: (c) => c.http.delete('/notes/3', c.alice.auth),
    status: 404,
    code: 'not_found',
  },
];

const OWN = (): readonly number[] => [1, 2];
const READ_ATTACKS: readonly Attack[] = [
  {
    name: 'filter on bob’s user_id',
    run: (c) => c.http.get(`/notes?user_id=eq.${c.bob.id}`, c.alice.auth),
    status: 200,
    ids: () => [],
  },
  {
    name: 'in-list with bob’s id',
    run: (c) => c.http.get(`/notes?user_id=in.(${c.alice.id},${c.bob.id})`, c.alice.auth),
    status: 200,
    ids: OWN,
  },
  {
    name: 'an or= parameter (PostgREST style)',
    run: (c) => c.http.get(`/notes?or=(user_id.eq.${c.bob.id})`, c.alice.auth),
    status: 400,
    code: 'invalid_filter',
  },
  {
    name: 'an or= parameter shaped as a filter',
    run: (c) => c.http.get(`/notes?or=eq.${c.bob.id}`, c.alice.auth),
    status: 400,
    code: 'unknown_column',
  },
  {
    name: 'user_id is null',
    run: (c) => c.http.get('/notes?user_id=is.null', c.alice.auth),
    status: 200,
    ids: () => [],
  },
  {
    name: 'select and order by the owner column',
    run: (c) => c.http.get('/notes?select=id,user_id&order=user_id.desc', c.alice.auth),
    status: 200,
    ids: OWN,
  },
  {
    name: 'a wildcard like',
    run: (c) => c.http.get('/notes?body=like.*', c.alice.auth),
    status: 200,
    ids: OWN,
  },
  {
    name: 'the biggest page',
    run: (c) => c.http.get('/notes?page_size=1000', c.alice.auth),
    status: 200,
    ids: OWN,
  },
  {
    name: 'bob’s note by key',
    run: (c) => c.http.get('/notes/3', c.alice.auth),
    status: 404,
    code: 'not_found',
  },
  {
    name: 'a value that tries to close the quote',
    run: (c) => c.http.get(`/notes?body=eq.${encodeURIComponent("x' OR '1'='1")}`, c.alice.auth),
    status: 200,
    ids: () => [],
  },
  {
    name: 'read_mine with bob’s filter',
    run: (c) => c.http.get(`/notes?mine&user_id=eq.${c.bob.id}`, c.alice.auth),
    status: 200,
    ids: () => [],
  },
];

const INJECTION_ATTACKS: readonly Attack[] = [
  {
    name: 'SQL in the table name',
    run: (c) => c.http.get(`/${encodeURIComponent('notes; DROP TABLE notes')}`, c.alice.auth),
    status: 404,
    code: 'unknown_table',
  },
  {
    name: 'SQL in a filter column',
    run: (c) => c.http.get(`/notes?${encodeURIComponent('user_id OR 1=1')}=eq.1`, c.alice.auth),
    status: 400,
    code: 'unknown_column',
  },
  {
    name: 'SQL in select',
    run: (c) =>
      c.http.get(
        `/notes?select=${encodeURIComponent('body,(select password from auth_users)')}`,
        c.alice.auth,
      ),
    status: 400,
  },
  {
    name: 'SQL in order',
    run: (c) => c.http.get(`/notes?order=${encodeURIComponent('user_id;DROP TABLE notes')}`, c.alice.auth),
    status: 400,
  },
  {
    name: 'SQL in a body key',
    run: (c) => c.http.post('/notes', { 'body) VALUES (1); --': 'x' }, c.alice.auth),
    status: 400,
    code: 'unknown_column',
  },
  {
    name: 'SQL in an integer value',
    run: (c) => c.http.post('/notes', { body: 'x', user_id: '1 OR 1=1' }, c.alice.auth),
    status: 400,
    code: 'invalid_value',
  },
  {
    name: 'SQL in a claim compared with a number',
    run: async (c) => c.http.get('/notes', bearer(await c.mint({ user_id: `${c.bob.id} OR 1=1` }))),
    status: 401,
    code: 'invalid_token',
  },
];

const PASSWORD_READS: readonly Attack[] = [
  {
    name: 'select=password as the admin',
    run: (c) => c.http.get('/auth_users?select=password', c.admin.auth),
    status: 400,
    code: 'unknown_column',
  },
  {
    name: 'filter on the password hash',
    run: (c) => c.http.get(`/auth_users?password=like.${encodeURIComponent('$2*')}`, c.admin.auth),
    status: 400,
    code: 'unknown_column',
  },
  {
    name: 'order by the password hash',
    run: (c) => c.http.get('/auth_users?order=password', c.admin.auth),
    status: 400,
    code: 'unknown_column',
  },
  {
    name: 'select the hidden username key',
    run: (c) => c.http.get('/auth_users?select=username_key', c.admin.auth),
    status: 400,
    code: 'unknown_column',
  },
  {
    name: 'read one user as the admin (no password in it)',
    run: (c) => c.http.get(`/auth_users/${c.alice.id}`, c.admin.auth),
    status: 200,
  },
];

forEachAuthDatabase('attacks', (ctx) => {
  beforeAll(async () => {
    await setPolicies(ctx(), []);
    const { alice, bob } = ctx();
    await resetRows(
      ctx(),
      'notes',
      ['id', 'user_id', 'body'],
      [
        [1, alice.id, 'alice 1'],
        [2, alice.id, 'alice 2'],
        [3, bob.id, 'bob 1'],
      ],
    );
  });

  const groups: ReadonlyArray<readonly [string, readonly Attack[]]> = [
    ['forged or broken tokens', TOKEN_ATTACKS],
    ['privilege escalation', ESCALATION_ATTACKS],
    ['admin writes that validation refuses', ADMIN_MISTAKES],
    ['owner-column changes', OWNER_ATTACKS],
    ['reading others’ rows', READ_ATTACKS],
    ['injection', INJECTION_ATTACKS],
    ['password reads', PASSWORD_READS],
  ];
  for (const [group, attacks] of groups) {
    describe(group, () => {
      it.each(attacks.map((a) => [a.name, a] as const))('%s', async (_name, attack) => {
        const before = await snapshot(ctx());
        const reply = await attack.run(ctx());
        if (attack.code === undefined) expect(reply.status, reply.text).toBe(attack.status);
        else expectError(reply, attack.status, attack.code);
        if (attack.status === 401 && attack.code === 'invalid_token') {
          const { message } = (reply.json as { error: { message: string } }).error;
          expect(reply.headers.get('www-authenticate')).toBe(
            `Bearer error="invalid_token", error_description="${message}"`,
          );
        }
        if (attack.ids !== undefined) expect(idsOf(reply)).toEqual(attack.ids(ctx()));
        expect(reply.text).not.toMatch(/\$2[aby]\$/);
        expect(await snapshot(ctx())).toEqual(before);
      });
    });
  }

  it('counts at least forty attack cases', () => {
    expect(groups.reduce((n, [, attacks]) => n + attacks.length, 0)).toBeGreaterThanOrEqual(40);
  });

  it('a password written through /auth_users is stored as a bcrypt hash and works for login', async () => {
    const { http, admin, sql } = ctx();
    const created = await http.post(
      '/auth_users',
      { username: 'dave', password: 'dave password' },
      admin.auth,
    );
    expect(created.status, created.text).toBe(201);
    expect(Object.keys(created.json as object).sort()).toEqual(['id', 'is_admin', 'username']);
    const stored = await sql.rows("SELECT password FROM auth_users WHERE username = 'dave'");
    expect(String(stored[0]?.['password'])).toMatch(/^\$2[aby]\$\d\d\$/);
    expect((await http.post('/auth/login', { username: 'Dave', password: 'dave password' })).status).toBe(
      200,
    );
    const changed = await http.patch(
      '/auth_users?username=eq.dave',
      { password: 'new dave password' },
      admin.auth,
    );
    expect(changed.json).toEqual({ updated: 1 });
    expect((await http.post('/auth/login', { username: 'dave', password: 'new dave password' })).status).toBe(
      200,
    );
    expect(
      String((await sql.rows("SELECT password FROM auth_users WHERE username = 'dave'"))[0]?.['password']),
    ).not.toContain('new dave');
  });
});
