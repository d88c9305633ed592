import { SignJWT, decodeJwt } from 'jose';
import { describe, expect, it } from 'vitest';
import { createTestDatabase, isAvailable, skipReason, ALL_KINDS } from '../../support/databases.js';
import { serverIt } from '../../support/server-only.js';
import { client } from '../../support/http.js';
import { openRawSql, startTestServer, testConfig } from '../../support/server.js';
import { newSecret } from '../../support/secret.js';
import { expectError } from './matrix.js';
import { forEachAuthDatabase, startAuthSuite, tableRows, type PolicyContext } from './policy-support.js';

forEachAuthDatabase('auth endpoints', (ctx) => {
  it('GET / reports auth on without a token', async () => {
    const reply = await ctx().http.get('/');
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual({ status: 'ok', database: ctx().kind, auth: true });
  });

  it('setup ran once: one admin with a bcrypt hash, the three default policies; a second setup is 409', async () => {
    const { http, sql } = ctx();
    const again = await http.post('/auth/setup', {});
    expectError(again, 409, 'already_setup');
    const users = await sql.rows(
      "SELECT username, password, is_admin FROM auth_users WHERE username = 'admin'",
    );
    expect(users).toHaveLength(1);
    expect(String(users[0]?.['password'])).toMatch(/^\$2[aby]\$\d\d\$/);
    expect(String(users[0]?.['password'])).not.toBe(ctx().admin.password);
    expect(
      await tableRows(ctx(), 'auth_policies', ['table_name', 'action', 'expression', 'description']),
    ).toEqual([
      {
        table_name: 'auth_users',
        action: 'all',
        expression: 'auth_user.is_admin',
        description: 'users operations are limited to admin user',
      },
      {
        table_name: 'auth_policies',
        action: 'all',
        expression: 'auth_user.is_admin',
        description: 'policies operations are limited to admin user',
      },
      {
        table_name: 'all',
        action: 'all',
        expression: 'user_id = auth_user.id',
        description: 'all tables/actions are limited to be filtered by user_id',
      },
    ]);
  });

  it('register answers 201 with id and username only, and stores a hash', async () => {
    const { http, sql } = ctx();
    const reply = await http.post('/auth/register', { username: 'Carol', password: 'correct horse' });
    expect(reply.status).toBe(201);
    expect(Object.keys(reply.json as object).sort()).toEqual(['id', 'username']);
    expect(reply.json).toMatchObject({ username: 'Carol' });
    const stored = await sql.rows("SELECT password, is_admin FROM auth_users WHERE username = 'Carol'");
    expect(String(stored[0]?.['password'])).toMatch(/^\$2[aby]\$/);
    expect([false, 0, '0']).toContain(stored[0]?.['is_admin']);
  });

  it.each([
    ['is_admin', { username: 'mallory', password: 'password123', is_admin: true }, 'invalid_body'],
    ['an id', { username: 'mallory', password: 'password123', id: 1 }, 'invalid_body'],
    ['no password', { username: 'mallory' }, 'invalid_body'],
    ['a 7-byte password', { username: 'mallory', password: '1234567' }, 'invalid_password'],
    ['a 73-byte password', { username: 'mallory', password: 'é'.repeat(36) + 'x' }, 'invalid_password'],
    ['a zero-width username', { username: 'mal\u200Blory', password: 'password123' }, 'invalid_username'],
    ['a 33-character username', { username: 'm'.repeat(33), password: 'password123' }, 'invalid_username'],
  ])('register with %s → 400, nothing written', async (_name, body, code) => {
    const { http, sql } = ctx();
    const before = await sql.count('auth_users');
    expectError(await http.post('/auth/register', body), 400, code);
    expect(await sql.count('auth_users')).toBe(before);
  });

  it.each(['alice', 'ALICE', 'Alice'])(
    'register of a taken username (%s) → 409, nothing written',
    async (username) => {
      const { http, sql } = ctx();
      const before = await sql.count('auth_users');
      expectError(
        await http.post('/auth/register', { username, password: 'another password' }),
        409,
        'username_taken',
      );
      expect(await sql.count('auth_users')).toBe(before);
    },
  );

  it('login answers a Bearer token with the configured lifetime and the user claims', async () => {
    const { http, alice } = ctx();
    const reply = await http.post('/auth/login', { username: 'ALICE', password: alice.password });
    expect(reply.status).toBe(200);
    expect(Object.keys(reply.json as object).sort()).toEqual([
      'expires_in',
      'refresh_token',
      'token',
      'token_type',
    ]);
    const body = reply.json as { token: string; token_type: string; expires_in: number };
    expect(body.token_type).toBe('Bearer');
    expect(body.expires_in).toBe(3600);
    const claims = decodeJwt(body.token);
    expect(claims).toMatchObject({
      user_id: alice.id,
      is_admin: false,
      username: 'alice',
      sid: expect.any(String),
    });
    expect((claims.exp ?? 0) - (claims.iat ?? 0)).toBe(3600);
  });

  it('a wrong password and an unknown user get the same 401 body', async () => {
    const { http } = ctx();
    const wrong = await http.post('/auth/login', { username: 'bob', password: 'not his password' });
    const unknown = await http.post('/auth/login', { username: 'nobody-here', password: 'not his password' });
    expectError(wrong, 401, 'invalid_credentials');
    expect(unknown.status).toBe(401);
    expect(unknown.json).toEqual(wrong.json);
  });

  it('logout answers 200 and the token keeps working (tokens are not revoked)', async () => {
    const { http, alice } = ctx();
    const reply = await http.post('/auth/logout', {}, alice.auth);
    expect(reply.status).toBe(200);
    expect((await http.get('/notes', alice.auth)).status).toBe(200);
  });

  it.each(['/auth/setup', '/auth/register', '/auth/login', '/auth/logout'])(
    'GET %s → 405 with Allow: POST',
    async (path) => {
      const reply = await ctx().http.get(path);
      expectError(reply, 405, 'method_not_allowed');
      expect(reply.headers.get('allow')).toBe('POST');
    },
  );

  it('an auth endpoint with a bad token → 401 invalid_token, never anonymous', async () => {
    const reply = await ctx().http.post('/auth/logout', {}, { headers: { authorization: 'Bearer nope' } });
    expectError(reply, 401, 'invalid_token');
    expect(reply.headers.get('www-authenticate')).toBe(
      'Bearer error="invalid_token", error_description="the token is malformed"',
    );
  });

  const reasons: ReadonlyArray<readonly [string, (c: PolicyContext) => Promise<string>, string]> = [
    [
      'no Bearer scheme',
      async (c) => c.alice.token,
      'the Authorization header does not use the Bearer scheme',
    ],
    [
      'a Basic scheme',
      async () => 'Basic YWRtaW46YWRtaW4=',
      'the Authorization header does not use the Bearer scheme',
    ],
    ['two tokens', async (c) => `Bearer ${c.alice.token} ${c.bob.token}`, 'the token is malformed'],
    ['a malformed token', async () => 'Bearer abc.def', 'the token is malformed'],
    [
      'a bad signature',
      async (c) => `Bearer ${await c.mint({ user_id: c.alice.id }, { secret: 'x'.repeat(40) })}`,
      'the token signature is invalid',
    ],
    [
      'HS512',
      async (c) => `Bearer ${await c.mint({ user_id: c.alice.id }, { alg: 'HS512' })}`,
      'the token is not signed with HS256',
    ],
    [
      'an expired token',
      async (c) => `Bearer ${await c.mint({ user_id: c.alice.id }, { expiresIn: -60 })}`,
      'the token has expired',
    ],
    [
      'a token valid from a minute from now',
      async (c) =>
        `Bearer ${await new SignJWT({ user_id: c.alice.id })
          .setProtectedHeader({ alg: 'HS256' })
          .setNotBefore(Math.floor(Date.now() / 1000) + 60)
          .sign(new TextEncoder().encode(c.secret))}`,
      'the token is not valid yet',
    ],
    [
      'no user_id',
      async (c) => `Bearer ${await c.mint({ is_admin: true })}`,
      'the token has no valid user_id claim',
    ],
    [
      'user_id "12a"',
      async (c) => `Bearer ${await c.mint({ user_id: '12a' })}`,
      'the token has no valid user_id claim',
    ],
  ];

  it.each(reasons)(
    '%s → 401 invalid_token saying why, in the body and in WWW-Authenticate, logged at debug',
    async (_name, header, message) => {
      const c = ctx();
      const authorization = await header(c);
      for (const reply of [
        await c.http.get('/notes', { headers: { authorization } }),
        await c.http.post(
          '/auth/login',
          { username: 'alice', password: c.alice.password },
          { headers: { authorization } },
        ),
      ]) {
        expect(reply.status).toBe(401);
        expect(reply.json).toEqual({ error: { code: 'invalid_token', message } });
        expect(reply.headers.get('www-authenticate')).toBe(
          `Bearer error="invalid_token", error_description="${message}"`,
        );
        const requestId = reply.headers.get('x-request-id');
        const logged = c.server.log.lines.find((l) => l['requestId'] === requestId);
        expect(logged).toMatchObject({ level: 20, status: 401, code: 'invalid_token', msg: message });
      }
    },
  );

  it.each([
    ['POST', '/auth/nope'],
    ['GET', '/auth/nope'],
    ['DELETE', '/auth/login/extra'],
    ['POST', '/auth/'],
    ['POST', '/auth/LOGIN'],
    ['POST', '/%61uth/nope'],
  ])('%s %s → 404 not_found (never read as a table named auth)', async (method, path) => {
    const reply = await ctx().http.call(method, path, method === 'GET' ? {} : { json: {} });
    expectError(reply, 404, 'not_found');
    expect(reply.json).toEqual({ error: { code: 'not_found', message: 'no such auth endpoint' } });
  });
});

for (const kind of ALL_KINDS) {
  describe.skipIf(!isAvailable(kind))(`concurrent setups [${kind}]${skipReason(kind) ?? ''}`, () => {
    serverIt(kind)(
      'ten simultaneous POST /auth/setup → one 201, nine 409, one admin, three policies',
      async () => {
        const ctx = await startAuthSuite(kind, { noSetup: true });
        try {
          const replies = await Promise.all(
            Array.from({ length: 10 }, () => ctx.http.post('/auth/setup', {})),
          );
          expect(replies.map((r) => r.status).sort()).toEqual([201, ...Array<number>(9).fill(409)]);
          for (const r of replies.filter((x) => x.status === 409)) expectError(r, 409, 'already_setup');
          expect(await ctx.sql.count('auth_users')).toBe(1);
          expect(await ctx.sql.count('auth_policies')).toBe(3);
          const created = replies.find((r) => r.status === 201)?.json as {
            username: string;
            password: string;
          };
          expect((await ctx.http.post('/auth/login', created)).status).toBe(200);
        } finally {
          await ctx.server.handle.close();
          await ctx.sql.close();
          await ctx.db.drop();
        }
      },
    );
  });
}

for (const kind of ALL_KINDS) {
  describe.skipIf(!isAvailable(kind))(`before setup [${kind}]${skipReason(kind) ?? ''}`, () => {
    it('register and login answer 409 not_setup; after setup both work', async () => {
      const ctx = await startAuthSuite(kind, { noSetup: true });
      try {
        const credentials = { username: 'alice', password: 'alice password' };
        for (const path of ['/auth/register', '/auth/login']) {
          const reply = await ctx.http.post(path, credentials);
          expectError(reply, 409, 'not_setup');
          expect(reply.json, path).toEqual({
            error: {
              code: 'not_setup',
              message:
                'auth is not set up on this database: run `rest auth setup` (or POST /auth/setup) first',
            },
          });
        }
        expect((await ctx.http.post('/auth/setup', {})).status).toBe(201);
        expect((await ctx.http.post('/auth/register', credentials)).status).toBe(201);
        expect((await ctx.http.post('/auth/login', credentials)).status).toBe(200);
      } finally {
        await ctx.server.handle.close();
        await ctx.sql.close();
        await ctx.db.drop();
      }
    });
  });
}

// The suites above hash at bcrypt cost 4 (test/support/server.ts TEST_HASHER); this one serves with
// the server's own hasher and proves that each way a password is written stores cost 10.
forEachAuthDatabase(
  'passwords a server stores',
  (ctx) => {
    it('setup, /auth/register, POST /auth_users and a password change store bcrypt hashes of cost 10 that log in', async () => {
      const { http, sql, admin, alice } = ctx();
      const made = await http.post(
        '/auth_users',
        { username: 'dave', password: 'dave password' },
        admin.auth,
      );
      expect(made.status, made.text).toBe(201);
      const changed = await http.post(
        '/auth/password',
        { current_password: alice.password, new_password: 'alice new password' },
        alice.auth,
      );
      expect(changed.status, changed.text).toBe(200);
      const rows = await sql.rows(
        "SELECT username, password FROM auth_users WHERE username IN ('admin', 'alice', 'bob', 'dave') ORDER BY username",
      );
      expect(rows.map((r) => [r['username'], String(r['password']).slice(0, 7)])).toEqual(
        ['admin', 'alice', 'bob', 'dave'].map((u) => [u, expect.stringMatching(/^\$2[aby]\$10\$/)]),
      );
      for (const [username, password] of [
        ['dave', 'dave password'],
        ['alice', 'alice new password'],
      ] as const) {
        expect((await http.post('/auth/login', { username, password })).status, username).toBe(200);
      }
    });
  },
  { hasher: 'production' },
);

describe('auth disabled', () => {
  it.skipIf(!isAvailable('sqlite'))(
    'answers every /auth/* path 404 auth_disabled, creates nothing, reports auth off',
    async () => {
      const db = await createTestDatabase('sqlite');
      const sql = await openRawSql(db);
      const server = await startTestServer(testConfig(db.url));
      try {
        const http = client(server.url);
        expect((await http.get('/')).json).toMatchObject({ auth: false });
        for (const [method, path] of [
          ['POST', '/auth/setup'],
          ['POST', '/auth/login'],
          ['GET', '/auth/login'],
          ['POST', '/auth/register'],
          ['POST', '/auth/nope'],
          ['GET', '/auth/'],
          ['PATCH', '/%61uth/x'],
        ] as const) {
          const reply = await http.call(method, path, method === 'GET' ? {} : { json: {} });
          expectError(reply, 404, 'auth_disabled');
          expect(reply.json).toEqual({
            error: { code: 'auth_disabled', message: 'auth is not enabled on this server' },
          });
        }
        // `/auth` itself is no auth path: it is the table endpoint of a table named auth.
        expectError(await http.get('/auth'), 404, 'unknown_table');
        expect(await sql.count('sqlite_master')).toBe(0);
      } finally {
        await server.handle.close();
        await sql.close();
        await db.drop();
      }
    },
  );

  it('a server refuses a secret under 32 bytes', async () => {
    const db = await createTestDatabase('sqlite');
    try {
      const config = { ...testConfig(db.url), auth: { enabled: true, secret: 'short', tokenTtlSeconds: 60 } };
      await expect(startTestServer(config)).rejects.toMatchObject({ code: 'weak_secret' });
      expect(newSecret().length).toBeGreaterThanOrEqual(32);
    } finally {
      await db.drop();
    }
  });
});
