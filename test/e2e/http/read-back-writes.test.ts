// The write path of a database without RETURNING (MySQL), exercised on MariaDB with RETURNING
// turned off: a create is read back by the key the database generated — never a key from the
// body — and a create or update check is judged by the database on the rows as stored.

import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { compilePolicySet } from '../../../compiler/policy-set.js';
import { ANONYMOUS, type AuthUser, type PolicyRow } from '../../../compiler/types.js';
import type { DbAdapter } from '../../../runtime/db/adapter.js';
import { createAdapter } from '../../../runtime/db/create-adapter.js';
import { createPortableAuthorizer } from '../../../runtime/enforce/portable-authorizer.js';
import { adapterRunner } from '../../../runtime/enforce/request-runner.js';
import { createSchemaCache } from '../../../runtime/db/schema-cache.js';
import { createTestDatabase, type TestDatabase } from '../../support/databases.js';
import { client, type Client } from '../../support/http.js';
import { openRawSql, startAppServer, testConfig, type RawSql } from '../../support/server.js';
import { serverDescribe } from '../../support/server-only.js';
import { expectError } from './matrix.js';

const POLICIES: readonly PolicyRow[] = [
  {
    id: 1,
    table_name: 'docs',
    action: 'all',
    expression: "user_id = auth_user.id and status != 'approved' and amount < 100",
    description: '',
    columns: null,
  },
  {
    id: 2,
    table_name: 'loose',
    action: 'all',
    expression: 'user_id = auth_user.id',
    description: '',
    columns: null,
  },
];

const userFrom = (header: string | string[] | undefined): AuthUser =>
  typeof header === 'string'
    ? { ...ANONYMOUS, id: Number(header), username: `u${header}`, is_authenticated: true }
    : ANONYMOUS;
const as = (id: number) => ({ headers: { 'x-user': String(id) } });

serverDescribe('mysql')('writes read back by generated key, checked as stored [mysql, no RETURNING]', () => {
  let db: TestDatabase;
  let sql: RawSql;
  let adapter: DbAdapter;
  let server: { url: string; close(): Promise<void> };
  let http: Client;

  beforeAll(async () => {
    db = await createTestDatabase('mysql');
    sql = await openRawSql(db);
    await sql.exec(
      "CREATE TABLE docs (id int AUTO_INCREMENT PRIMARY KEY, user_id int, status enum('draft','approved') NOT NULL DEFAULT 'draft', amount numeric(6,2) NOT NULL DEFAULT 0, secret varchar(20))",
    );
    await sql.exec('CREATE TABLE loose (user_id int, body varchar(20))');
    adapter = await createAdapter(db.url, { returning: false });
    expect(adapter.returning).toEqual({ insert: false, update: false, delete: false });
    server = await startAppServer({
      adapter,
      schema: createSchemaCache(adapter),
      config: testConfig(db.url),
      authenticate: (req) => userFrom(req.headers['x-user']),
      authorizer: createPortableAuthorizer({
        policies: { get: async () => ({ compiled: compilePolicySet(POLICIES, adapter.dialect) }) },
      }),
      runner: adapterRunner(adapter),
    });
    http = client(server.url);
  });
  afterAll(async () => {
    await server.close();
    await adapter.close();
    await sql.close();
    await db.drop();
  });
  beforeEach(async () => {
    await sql.exec('DELETE FROM docs');
    await sql.exec('DELETE FROM loose');
    // Row 0 belongs to user 2: storable only with NO_AUTO_VALUE_ON_ZERO.
    await sql.exec(
      "SET SESSION sql_mode = CONCAT(@@sql_mode, ',NO_AUTO_VALUE_ON_ZERO'); INSERT INTO docs (id, user_id, amount, secret) VALUES (0, 2, 1, 'bob-only'); SET SESSION sql_mode = REPLACE(@@sql_mode, ',NO_AUTO_VALUE_ON_ZERO', '')",
    );
  });
  const docs = () => sql.rows('SELECT id, user_id, status, amount FROM docs ORDER BY id');

  it('answers a create with id 0 in the body with the row the database created, never row 0', async () => {
    const reply = await http.post('/docs', { id: 0, amount: 5 }, as(1));
    expect(reply.status).toBe(201);
    const created = reply.json as Record<string, unknown>;
    expect(created['id']).not.toBe(0);
    expect(created).toMatchObject({ user_id: 1, status: 'draft', amount: 5, secret: null });
    expect(await sql.rows(`SELECT user_id, secret FROM docs WHERE id = 0`)).toEqual([
      { user_id: 2, secret: 'bob-only' },
    ]);
  });

  it('answers with the stored row: defaults and rounding as the database applied them', async () => {
    const reply = await http.post('/docs', { amount: 12.344 }, as(1));
    expect(reply.status).toBe(201);
    expect(reply.json).toMatchObject({ user_id: 1, status: 'draft', amount: 12.34 });
  });

  it.each([
    ['an enum value in another case', { status: 'APPROVED' }],
    ['an enum value with a trailing space', { status: 'approved ' }],
    ['a number the column rounds up to the limit', { amount: 99.999 }],
  ])('refuses a create whose stored row breaks the policy: %s', async (_name, body) => {
    const before = await docs();
    expectError(await http.post('/docs', [{ amount: 1 }, body], as(1)), 403, 'policy_check_failed');
    expect(await docs()).toEqual(before);
  });

  it('refuses an update whose stored rows break the policy, changing none of them', async () => {
    await http.post('/docs', [{ amount: 1 }, { amount: 2 }], as(1));
    const before = await docs();
    expectError(
      await http.patch('/docs?amount=gt.0', { status: 'Approved' }, as(1)),
      403,
      'policy_check_failed',
    );
    expectError(await http.patch('/docs?amount=gt.0', { amount: 99.995 }, as(1)), 403, 'policy_check_failed');
    expect(await docs()).toEqual(before);
    expect((await http.patch('/docs?amount=gt.0', { amount: 99.99 }, as(1))).json).toEqual({ updated: 2 });
    // The raw driver reads DECIMAL as text.
    expect((await docs()).filter((d) => d['user_id'] === 1).map((d) => d['amount'])).toEqual([
      '99.99',
      '99.99',
    ]);
  });

  it('finds updated rows by their new key when the update changes the key', async () => {
    const created = (await http.post('/docs', { amount: 1 }, as(1))).json as { id: number };
    expect((await http.patch(`/docs/${created.id}`, { id: 500 }, as(1))).json).toEqual({ updated: 1 });
    expectError(await http.patch('/docs/500', { id: 501, amount: 100 }, as(1)), 403, 'policy_check_failed');
    expect(await sql.rows('SELECT id, amount FROM docs WHERE user_id = 1')).toEqual([
      { id: 500, amount: '1.00' },
    ]);
  });

  it('refuses a checked write to a table without a primary key: its stored rows cannot be found', async () => {
    expectError(await http.post('/loose', { body: 'x' }, as(1)), 403, 'policy_check_unverifiable');
    expectError(await http.patch('/loose?body=eq.x', { body: 'y' }, as(1)), 403, 'policy_check_unverifiable');
    expect(await sql.count('loose')).toBe(0);
  });
});
