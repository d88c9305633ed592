// A transient database condition is answered 503 with its own code and Retry-After, never 500
// (docs/http-api.md): a column or a table renamed while the server serves (its statement was
// planned for the schema as it was) is `schema_changed`, and the next request is planned against
// the schema as it is now; two transactions that deadlock end one of them `transaction_conflict`;
// on PostgreSQL a value too long for a btree index is 400 `invalid_value`, nothing written. Real
// servers on every database, PostgreSQL with native RLS and without. The server's schema check
// interval is an hour here, so only the failed statement can make it look again.

import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DialectName } from '../../../compiler/types.js';
import { ALL_KINDS, createTestDatabase, skipReason, type TestDatabase } from '../../support/databases.js';
import { client, type Client, type Reply } from '../../support/http.js';
import { serverIt } from '../../support/server-only.js';
import {
  openRawSql,
  startTestServer,
  testConfig,
  type RawSql,
  type TestServer,
} from '../../support/server.js';
import { newSecret } from '../../support/secret.js';
import { expectError } from './matrix.js';
import { bearer } from './policy-support.js';

const AN_HOUR_MS = 3_600_000;

const DDL: Readonly<Record<DialectName, readonly string[]>> = {
  postgres: [
    'CREATE TABLE renamed_col (id serial PRIMARY KEY, user_id integer, body text)',
    'CREATE TABLE renamed_tab (id serial PRIMARY KEY, user_id integer, body text)',
    'CREATE TABLE acct (id serial PRIMARY KEY, user_id integer, v integer NOT NULL DEFAULT 0)',
    'CREATE TABLE tagged (id serial PRIMARY KEY, user_id integer, tag text)',
    'CREATE INDEX tagged_tag ON tagged (tag)',
  ],
  mysql: [
    'CREATE TABLE renamed_col (id int AUTO_INCREMENT PRIMARY KEY, user_id int, body text)',
    'CREATE TABLE renamed_tab (id int AUTO_INCREMENT PRIMARY KEY, user_id int, body text)',
    'CREATE TABLE acct (id int AUTO_INCREMENT PRIMARY KEY, user_id int, v int NOT NULL DEFAULT 0)',
    'CREATE TABLE ballast (id int AUTO_INCREMENT PRIMARY KEY, n int)',
  ],
  sqlite: [
    'CREATE TABLE renamed_col (id INTEGER PRIMARY KEY AUTOINCREMENT, user_id INTEGER, body TEXT)',
    'CREATE TABLE renamed_tab (id INTEGER PRIMARY KEY AUTOINCREMENT, user_id INTEGER, body TEXT)',
  ],
};

interface Target {
  readonly kind: DialectName;
  readonly rls: boolean;
}

const TARGETS: readonly Target[] = ALL_KINDS.flatMap((kind): Target[] =>
  kind === 'postgres'
    ? [
        { kind, rls: false },
        { kind, rls: true },
      ]
    : [{ kind, rls: false }],
);

interface Suite {
  readonly db: TestDatabase;
  readonly sql: RawSql;
  readonly server: TestServer;
  readonly http: Client;
  readonly alice: ReturnType<typeof bearer>;
}

async function start({ kind, rls }: Target): Promise<Suite> {
  const db = await createTestDatabase(kind);
  const sql = await openRawSql(db);
  for (const ddl of DDL[kind]) await sql.exec(ddl);
  const server = await startTestServer(
    {
      ...testConfig(db.url),
      db: { url: db.url, rls },
      auth: { enabled: true, secret: newSecret(), tokenTtlSeconds: 3600 },
    },
    { schemaCheckIntervalMs: AN_HOUR_MS },
  );
  const http = client(server.url);
  expect((await http.post('/auth/setup', {})).status).toBe(201);
  const password = 'alice password';
  expect((await http.post('/auth/register', { username: 'alice', password })).status).toBe(201);
  const login = await http.post('/auth/login', { username: 'alice', password });
  return { db, sql, server, http, alice: bearer((login.json as { token: string }).token) };
}

/** A 503 of `code` that tells the client when to send it again. */
function expectRetry(reply: Reply, code: string): void {
  expectError(reply, 503, code);
  expect(Number(reply.headers.get('retry-after'))).toBeGreaterThan(0);
}

/** Polls `probe` until it is true; the bound is generous, the test's timeout is the real limit. */
async function until(probe: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 400; i += 1) {
    if (await probe()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`never happened: ${what}`);
}

for (const target of TARGETS) {
  const { kind, rls } = target;
  const label = kind === 'postgres' ? `${kind} rls=${rls ? 'on' : 'off'}` : kind;
  const reason = skipReason(kind);
  describe.skipIf(reason !== undefined)(
    `transient database conditions [${label}]${reason === undefined ? '' : ` — ${reason}`}`,
    () => {
      let suite: Suite | undefined;
      const ctx = (): Suite => {
        if (suite === undefined) throw new Error('the suite did not start');
        return suite;
      };
      beforeAll(async () => {
        suite = await start(target);
      }, 60_000);
      afterAll(async () => {
        await suite?.server.handle.close();
        await suite?.sql.close();
        await suite?.db.drop();
      });

      it('a column renamed while serving: 503 schema_changed with Retry-After, then the new column is served', async () => {
        const { http, sql, alice } = ctx();
        expect((await http.post('/renamed_col', { body: 'a' }, alice)).status).toBe(201);
        expect((await http.get('/renamed_col?select=body', alice)).json).toEqual([{ body: 'a' }]);
        await sql.exec('ALTER TABLE renamed_col RENAME COLUMN body TO note');
        expectRetry(await http.get('/renamed_col', alice), 'schema_changed');
        const again = await http.get('/renamed_col?select=note', alice);
        expect(again.status, again.text).toBe(200);
        expect(again.json).toEqual([{ note: 'a' }]);
        expect((await http.get('/renamed_col?select=body', alice)).status).toBe(400);
      });

      it('a table renamed while serving: 503 schema_changed with Retry-After, then 404', async () => {
        const { http, sql, alice } = ctx();
        expect((await http.post('/renamed_tab', { body: 'a' }, alice)).status).toBe(201);
        await sql.exec('ALTER TABLE renamed_tab RENAME TO renamed_away');
        expectRetry(await http.get('/renamed_tab', alice), 'schema_changed');
        expectError(await http.get('/renamed_tab', alice), 404, 'unknown_table');
      });

      if (kind === 'sqlite') return;

      serverIt(kind)(
        'two transactions that deadlock: the request is 503 transaction_conflict with Retry-After',
        async () => {
          const { http, db, alice } = ctx();
          for (const v of [1, 2]) expect((await http.post('/acct', { v }, alice)).status).toBe(201);
          const other = await openRawSql(db);
          const watcher = await openRawSql(db);
          try {
            // The other transaction holds row 2 and is the heavier one: the database ends the
            // request's, which holds row 1 and waits for row 2 (PostgreSQL: the request's backend
            // runs the deadlock check first; MariaDB: InnoDB rolls back the lighter transaction).
            await other.exec(kind === 'postgres' ? 'BEGIN' : 'START TRANSACTION');
            if (kind === 'postgres') await other.exec("SET LOCAL deadlock_timeout = '10min'");
            else
              await other.exec(
                `INSERT INTO ballast (n) VALUES ${Array.from({ length: 200 }, (_, i) => `(${i})`).join(', ')}`,
              );
            await other.exec('UPDATE acct SET v = v + 10 WHERE id = 2');
            const request = http.patch('/acct?id=in.(1,2)', { v: 7 }, alice);
            // Row 1 is locked by nobody but the request, which locks it before it asks for row 2.
            // (Information views are no help here: MariaDB's INNODB_TRX is a cache that a
            // server-wide reader polling faster than 100 ms keeps from ever refreshing.)
            const rowOneTaken = async (): Promise<boolean> => {
              try {
                await watcher.rows('SELECT id FROM acct WHERE id = 1 FOR UPDATE NOWAIT');
                return false;
              } catch (e) {
                const { code, errno } = e as { code?: unknown; errno?: unknown };
                if (code === '55P03' || errno === 1205) return true;
                throw e;
              }
            };
            await until(rowOneTaken, 'the request holds row 1');
            await other.exec('UPDATE acct SET v = v + 10 WHERE id = 1');
            await other.exec('COMMIT');
            expectRetry(await request, 'transaction_conflict');
            const rows = await watcher.rows('SELECT id, v FROM acct ORDER BY id');
            expect(rows.map((r) => [Number(r['id']), Number(r['v'])])).toEqual([
              [1, 11],
              [2, 12],
            ]);
          } finally {
            await other.close();
            await watcher.close();
          }
        },
        60_000,
      );

      if (kind !== 'postgres') return;

      it('a value too long for a btree index: 400 invalid_value, nothing written', async () => {
        const { http, sql, alice } = ctx();
        // Random text does not compress below the index's limit of about 2.7 kB.
        const tag = randomBytes(12_000).toString('base64');
        const reply = await http.post('/tagged', { tag }, alice);
        expectError(reply, 400, 'invalid_value');
        expect(await sql.count('tagged')).toBe(0);
        expect((await http.post('/tagged', { tag: 'short' }, alice)).status).toBe(201);
      });
    },
  );
}
