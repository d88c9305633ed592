// The OpenAPI document (docs/http-api.md "OpenAPI") through real HTTP on every database: valid
// OpenAPI 3.1 for anonymous callers, users and admins; what the caller may not use left out; a
// policy or schema change shown within 2 s.

import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import { signAnonKey } from '../../../runtime/auth/tokens.js';
import { serverIt } from '../../support/server-only.js';
import type { Client } from '../../support/http.js';
import { expectError, forEachDatabase } from './matrix.js';
import {
  expectValidOpenApi,
  fetchOpenApi,
  keyPaths,
  parameterNames,
  tableOperations,
  type OpenApiDoc,
} from './openapi-support.js';
import { forEachAuthDatabase, setPolicies, type PolicyContext } from './policy-support.js';

const RELOAD_LIMIT_MS = 2000;

const SEED_ALL = ['delete', 'get', 'patch', 'post', 'put'];
const PGRST_ALL = ['delete', 'get', 'head', 'patch', 'post'];

/** Milliseconds until the caller's document satisfies `ready`, polling every 20 ms; fails past the limit. */
async function msUntilDocument(
  http: Client,
  headers: Readonly<Record<string, string>>,
  ready: (doc: OpenApiDoc) => boolean,
): Promise<number> {
  const start = performance.now();
  for (;;) {
    const { doc } = await fetchOpenApi(http, headers);
    const elapsed = performance.now() - start;
    if (ready(doc)) return elapsed;
    if (elapsed > RELOAD_LIMIT_MS + 1000) throw new Error(`not ready after ${Math.round(elapsed)} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The three callers: anonymous, a user, an admin. */
const callers = (ctx: PolicyContext): ReadonlyArray<readonly [string, Readonly<Record<string, string>>]> => [
  ['anonymous', {}],
  ['a user', ctx.alice.auth.headers],
  ['an admin', ctx.admin.auth.headers],
];

forEachAuthDatabase('OpenAPI document', (ctx, kind) => {
  it('validates as OpenAPI 3.1 for anonymous, a user and an admin, on both paths', async () => {
    await setPolicies(ctx(), [
      { table_name: 'plain', action: 'read', expression: '' },
      { table_name: 'posts', action: 'all', expression: 'auth_user.is_authenticated' },
    ]);
    for (const [who, headers] of callers(ctx())) {
      const { reply, doc } = await fetchOpenApi(ctx().http, headers);
      expect(doc.openapi, who).toBe('3.1.0');
      await expectValidOpenApi(doc);
      expect(reply.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(reply.headers.get('vary')).toMatch(/Authorization/);
      // fetch sends `Accept: */*` when none is given.
      for (const accept of [
        undefined,
        'application/openapi+json',
        'application/openapi+json;q=1, */*;q=0.1',
      ]) {
        const root = await fetchOpenApi(
          ctx().http,
          { ...headers, ...(accept === undefined ? {} : { accept }) },
          '/rest/v1/',
        );
        expect(root.reply.headers.get('content-type')).toBe('application/openapi+json; charset=utf-8');
        expect(root.doc).toEqual(doc);
      }
      const asJson = await fetchOpenApi(ctx().http, { ...headers, accept: 'application/json' }, '/rest/v1/');
      expect(asJson.reply.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(asJson.doc).toEqual(doc);
      const head = await ctx().http.call('HEAD', '/openapi.json', { headers });
      expect(head.status).toBe(200);
      expect(head.text).toBe('');
    }
  });

  it('lists only the tables and actions each caller could be allowed', async () => {
    await setPolicies(ctx(), [
      { table_name: 'plain', action: 'read', expression: '' },
      { table_name: 'posts', action: 'read', expression: '' },
      { table_name: 'posts', action: 'create', expression: 'author_id = auth_user.id' },
      { table_name: 'posts', action: 'update', expression: 'author_id = auth_user.id' },
      { table_name: 'posts', action: 'delete', expression: 'auth_user.is_admin' },
    ]);
    // notes: the default `all` row (user_id = auth_user.id); docs: the same row, but docs has no user_id.
    const anonymous = (await fetchOpenApi(ctx().http)).doc;
    expect(tableOperations(anonymous)).toEqual({
      '/plain': ['get'],
      '/plain/{key}': ['get'],
      '/rest/v1/plain': ['get', 'head'],
      '/posts': ['get'],
      '/posts/{key}': ['get'],
      '/rest/v1/posts': ['get', 'head'],
    });
    const user = (await fetchOpenApi(ctx().http, ctx().alice.auth.headers)).doc;
    expect(tableOperations(user)).toEqual({
      '/notes': SEED_ALL,
      '/notes/{key}': ['delete', 'get', 'patch', 'put'],
      '/rest/v1/notes': PGRST_ALL,
      '/plain': ['get'],
      '/plain/{key}': ['get'],
      '/rest/v1/plain': ['get', 'head'],
      '/posts': ['get', 'patch', 'post', 'put'],
      '/posts/{key}': ['get', 'patch', 'put'],
      '/rest/v1/posts': ['get', 'head', 'patch', 'post'],
    });
    const admin = (await fetchOpenApi(ctx().http, ctx().admin.auth.headers)).doc;
    const adminOps = tableOperations(admin);
    expect(adminOps['/posts']).toEqual(SEED_ALL);
    expect(adminOps['/rest/v1/auth_users']).toEqual(PGRST_ALL);
    expect(adminOps['/rest/v1/auth_policies']).toEqual(PGRST_ALL);
    expect(adminOps['/docs']).toBeUndefined();
    for (const doc of [anonymous, user]) {
      expect(
        Object.keys(doc.paths).filter((p) => p.includes('auth_users') || p.includes('auth_policies')),
      ).toEqual([]);
      expect(Object.keys(doc.components.schemas).filter((s) => s.startsWith('table.auth_'))).toEqual([]);
    }
    for (const doc of [anonymous, user, admin]) {
      expect(
        Object.keys(doc.paths).some((p) => /auth_sessions|auth_refresh_tokens|auth_login_throttle/.test(p)),
      ).toBe(false);
    }
  });

  it('leaves the password out of every schema but the login and register bodies', async () => {
    await setPolicies(ctx(), []);
    const { doc } = await fetchOpenApi(ctx().http, ctx().admin.auth.headers);
    const users = doc.components.schemas['table.auth_users'];
    expect(Object.keys(users?.properties ?? {}).sort()).toEqual(['id', 'is_admin', 'username']);
    const places = keyPaths(doc, 'password');
    expect(places.length).toBeGreaterThan(0);
    for (const place of places) expect(place).toMatch(/^\/paths\/\/auth\/(login|register|setup)\//);
    expect(keyPaths(doc, 'username_key')).toEqual([]);
    const login = doc.paths['/auth/login'] as {
      post: { requestBody: { content: Record<string, { schema: unknown }> } };
    };
    expect(login.post.requestBody.content['application/json']?.schema).toMatchObject({
      required: ['username', 'password'],
    });
  });

  it('describes columns with JSON types and nullability', async () => {
    await setPolicies(ctx(), [{ table_name: 'posts', action: 'all', expression: '' }]);
    const { doc } = await fetchOpenApi(ctx().http);
    const posts = doc.components.schemas['table.posts'];
    expect(posts?.properties).toMatchObject({
      id: { type: 'integer' },
      author_id: { type: ['integer', 'null'] },
      title: { type: ['string', 'null'], maxLength: 100 },
      published: { type: 'boolean' },
    });
    expect(posts?.required).toEqual(['id', 'author_id', 'title', 'published']);
    expect(doc.components.schemas['table.posts.insert']?.required).toBeUndefined();
    expect(parameterNames(doc, '/rest/v1/posts', 'get')).toEqual([
      'query:select',
      'query:order',
      'query:limit',
      'query:offset',
      'query:or',
      'query:and',
      'query:id',
      'query:author_id',
      'query:title',
      'query:published',
      'header:Prefer',
      'header:Range',
      'header:Accept-Profile',
    ]);
    expect(parameterNames(doc, '/posts', 'delete')).toEqual([
      'query:id',
      'query:author_id',
      'query:title',
      'query:published',
    ]);
    expect(parameterNames(doc, '/rest/v1/posts', 'post')).toEqual([
      'query:columns',
      'query:on_conflict',
      'query:select',
      'header:Prefer',
      'header:Content-Profile',
    ]);
    expect(doc.components.securitySchemes).toMatchObject({ bearer: { type: 'http', scheme: 'bearer' } });
  });

  it("follows the caller's column rules: hidden left out, masked nullable, protected out of bodies", async () => {
    await setPolicies(ctx(), [
      // Alice reads id and author_id of every post and published of her own (masked), never title.
      {
        table_name: 'posts',
        action: 'read',
        expression: 'author_id = auth_user.id',
        columns: '* except (title)',
      },
      {
        table_name: 'posts',
        action: 'read',
        expression: 'auth_user.is_authenticated',
        columns: 'id, author_id',
      },
      // She writes author_id and title, never id or published.
      {
        table_name: 'posts',
        action: 'create',
        expression: 'auth_user.is_authenticated',
        columns: 'author_id, title',
      },
      { table_name: 'posts', action: 'update', expression: 'author_id = auth_user.id', columns: 'title' },
    ]);
    const { doc } = await fetchOpenApi(ctx().http, ctx().alice.auth.headers);
    await expectValidOpenApi(doc);
    const row = doc.components.schemas['table.posts'];
    expect(Object.keys(row?.properties ?? {})).toEqual(['id', 'author_id', 'published']);
    expect(row?.properties).toMatchObject({
      id: { type: 'integer' },
      author_id: { type: ['integer', 'null'] },
      published: { type: ['boolean', 'null'] },
    });
    expect(row?.required).toEqual(['id', 'author_id', 'published']);
    expect(Object.keys(doc.components.schemas['table.posts.insert']?.properties ?? {})).toEqual([
      'author_id',
      'title',
    ]);
    const filters = parameterNames(doc, '/rest/v1/posts', 'get').filter((p) => p.startsWith('query:'));
    expect(filters).toContain('query:published');
    expect(filters).not.toContain('query:title');
    // Without the rules, published is a boolean that is never null.
    await setPolicies(ctx(), [{ table_name: 'posts', action: 'all', expression: '' }]);
    const plain = (await fetchOpenApi(ctx().http, ctx().alice.auth.headers)).doc;
    expect(plain.components.schemas['table.posts']?.properties).toMatchObject({
      published: { type: 'boolean' },
    });
  });

  it('gives an anonymous API key the anonymous document and a bad token 401', async () => {
    await setPolicies(ctx(), [{ table_name: 'plain', action: 'read', expression: '' }]);
    const anonymous = (await fetchOpenApi(ctx().http)).doc;
    const key = await signAnonKey(ctx().secret);
    expect((await fetchOpenApi(ctx().http, { apikey: key })).doc).toEqual(anonymous);
    expect((await fetchOpenApi(ctx().http, { authorization: `Bearer ${key}` })).doc).toEqual(anonymous);
    const forged = await ctx().mint({ user_id: ctx().admin.id, is_admin: true }, { secret: 'x'.repeat(40) });
    expectError(
      await ctx().http.get('/openapi.json', { headers: { authorization: `Bearer ${forged}` } }),
      401,
      'invalid_token',
    );
  });

  it('shows a policy change made through the API on the next request', async () => {
    await setPolicies(ctx(), []);
    const before = (await fetchOpenApi(ctx().http)).doc;
    expect(before.paths['/plain']).toBeUndefined();
    await setPolicies(ctx(), [{ table_name: 'plain', action: 'read', expression: '' }]);
    const after = (await fetchOpenApi(ctx().http)).doc;
    expect(Object.keys(after.paths['/plain'] ?? {})).toEqual(['get']);
    expect(after.info.version).not.toBe(before.info.version);
  });

  serverIt(kind)('shows a policy or schema change made in the database within 2 s', async () => {
    const { http, sql } = ctx();
    await setPolicies(ctx(), []);
    expect((await fetchOpenApi(http)).doc.paths['/docs']).toBeUndefined();
    await sql.exec(
      "INSERT INTO auth_policies (table_name, action, expression, description) VALUES ('docs', 'read', '', 'public docs')",
    );
    const policyMs = await msUntilDocument(http, {}, (d) => d.paths['/rest/v1/docs'] !== undefined);
    const table = `fresh_${randomBytes(4).toString('hex')}`;
    await sql.exec(`CREATE TABLE ${table} (id integer PRIMARY KEY, user_id integer)`);
    const schemaMs = await msUntilDocument(
      http,
      ctx().alice.auth.headers,
      (d) => d.paths[`/rest/v1/${table}`] !== undefined,
    );
    await sql.exec(`DROP TABLE ${table}`);
    await setPolicies(ctx(), []);
    expect(policyMs).toBeLessThan(RELOAD_LIMIT_MS);
    expect(schemaMs).toBeLessThan(RELOAD_LIMIT_MS);
  });
});

forEachDatabase('OpenAPI document, auth off', (ctx) => {
  it('validates, lists every table with every operation, and no auth endpoint or scheme', async () => {
    const { doc } = await fetchOpenApi(ctx().http);
    await expectValidOpenApi(doc);
    const operations = tableOperations(doc);
    for (const table of ['items', 'tags', 'pairs', 'logs', 'kinds', 'we%22ird']) {
      expect(operations[`/${table}`], table).toEqual(SEED_ALL);
      expect(operations[`/rest/v1/${table}`], table).toEqual(PGRST_ALL);
    }
    // A key path only for a one-column primary key.
    expect(operations['/items/{key}']).toEqual(['delete', 'get', 'patch', 'put']);
    expect(operations['/pairs/{key}']).toBeUndefined();
    expect(operations['/logs/{key}']).toBeUndefined();
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/auth/'))).toEqual([]);
    expect(doc.components.securitySchemes).toBeUndefined();
    expect(doc.security).toBeUndefined();
  });

  it('gives each column its JSON type, the same on every database', async () => {
    const { doc } = await fetchOpenApi(ctx().http);
    const items = doc.components.schemas['table.items']?.properties ?? {};
    const typeOf = (column: string): unknown => {
      const schema = items[column] as Record<string, unknown>;
      return { type: schema['type'], format: schema['format'] };
    };
    expect({
      id: typeOf('id'),
      title: typeOf('title'),
      qty: typeOf('qty'),
      price: typeOf('price'),
      done: typeOf('done'),
      meta: typeOf('meta'),
      due: typeOf('due'),
      created_at: typeOf('created_at'),
    }).toEqual({
      id: { type: 'integer', format: undefined },
      title: { type: 'string', format: undefined },
      qty: { type: ['integer', 'null'], format: undefined },
      price: { type: ['number', 'null'], format: undefined },
      done: { type: 'boolean', format: undefined },
      meta: { type: undefined, format: undefined },
      due: { type: ['string', 'null'], format: 'date' },
      created_at: { type: ['string', 'null'], format: 'date-time' },
    });
    // A create must give title (NOT NULL, no default); id is generated, done has a default.
    expect(doc.components.schemas['table.items.insert']?.required).toEqual(['title']);
    expect(doc.components.schemas['table.we_ird']?.properties).toHaveProperty(['sp ace']);
  });
});
