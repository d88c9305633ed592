// docs/http-api.md limits over HTTP on every database: a POST array over -http.max_rows is 413
// too_many_rows with nothing written; a statement running longer than -db.statement_timeout is
// cancelled by the database → 503 query_timeout, nothing written (PostgreSQL with native RLS and
// without, MariaDB). The slow statements are real: a BEFORE INSERT trigger that sleeps, and on
// PostgreSQL a DBA's restrictive policy that sleeps, which only the native RLS path evaluates.
// SQLite cannot interrupt a statement (README): its case pins that the slow write completes.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DialectName } from '../../../compiler/types.js';
import { ALL_KINDS, createTestDatabase, skipReason, type TestDatabase } from '../../support/databases.js';
import { client, type Client } from '../../support/http.js';
import { serverIt } from '../../support/server-only.js';
import {
  openRawSql,
  startTestServer,
  testConfig,
  type RawSql,
  type TestServer,
} from '../../support/server.js';
import { expectError } from './matrix.js';
import { bearer } from './policy-support.js';
import { newSecret } from '../../support/secret.js';

const MAX_ROWS = 3;
const TIMEOUT_MS = 1000;
/** How long the slow statements would run if nothing cancelled them. */
const SLEEP_S = 6;

const DDL: Readonly<Record<DialectName, readonly string[]>> = {
  postgres: [
    'CREATE TABLE quick (id serial PRIMARY KEY, user_id integer, body text)',
    'CREATE TABLE slow (id serial PRIMARY KEY, user_id integer, body text)',
    `CREATE FUNCTION slow_insert() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(${SLEEP_S}); RETURN NEW; END $$`,
    'CREATE TRIGGER slow_insert BEFORE INSERT ON slow FOR EACH ROW EXECUTE FUNCTION slow_insert()',
    'CREATE TABLE slow_reads (id serial PRIMARY KEY, user_id integer, body text)',
    `CREATE FUNCTION slow_true() RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(${SLEEP_S}); RETURN true; END $$`,
  ],
  mysql: [
    'CREATE TABLE quick (id int AUTO_INCREMENT PRIMARY KEY, user_id int, body text)',
    'CREATE TABLE slow (id int AUTO_INCREMENT PRIMARY KEY, user_id int, body text)',
    `CREATE TRIGGER slow_insert BEFORE INSERT ON slow FOR EACH ROW DO SLEEP(${SLEEP_S})`,
  ],
  sqlite: [
    'CREATE TABLE quick (id INTEGER PRIMARY KEY AUTOINCREMENT, user_id INTEGER, body TEXT)',
    'CREATE TABLE slow (id INTEGER PRIMARY KEY AUTOINCREMENT, user_id INTEGER, body TEXT)',
    // SQLite has no sleep: a recursive count keeps the statement busy for well over the timeout.
    `CREATE TRIGGER slow_insert BEFORE INSERT ON slow BEGIN
       SELECT count(*) FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 15000000) SELECT x FROM c);
     END`,
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
  readonly alice: { readonly id: number; readonly auth: ReturnType<typeof bearer> };
}

async function start({ kind, rls }: Target): Promise<Suite> {
  const db = await createTestDatabase(kind);
  const sql = await openRawSql(db);
  for (const ddl of DDL[kind]) await sql.exec(ddl);
  const base = testConfig(db.url);
  const server = await startTestServer({
    ...base,
    db: { url: db.url, rls, statementTimeoutMs: TIMEOUT_MS },
    auth: { enabled: true, secret: newSecret(), tokenTtlSeconds: 3600 },
    http: { ...base.http, maxRows: MAX_ROWS },
  });
  const http = client(server.url);
  expect((await http.post('/auth/setup', {})).status).toBe(201);
  const password = 'alice password';
  const registered = await http.post('/auth/register', { username: 'alice', password });
  expect(registered.status, registered.text).toBe(201);
  const login = await http.post('/auth/login', { username: 'alice', password });
  const { id } = registered.json as { id: number };
  return { db, sql, server, http, alice: { id, auth: bearer((login.json as { token: string }).token) } };
}

for (const target of TARGETS) {
  const { kind, rls } = target;
  const label = kind === 'postgres' ? `${kind} rls=${rls ? 'on' : 'off'}` : kind;
  const reason = skipReason(kind);
  // The timeout cases need a real server: the embedded PGlite does not enforce statement_timeout.
  const timeoutIt = serverIt(kind);
  describe.skipIf(reason !== undefined)(
    `limits [${label}]${reason === undefined ? '' : ` — ${reason}`}`,
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

      const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ body: `row ${i}` }));

      it(`a POST array of ${MAX_ROWS + 1} rows → 413 too_many_rows, nothing written`, async () => {
        const { http, sql, alice } = ctx();
        const reply = await http.post('/quick', rows(MAX_ROWS + 1), alice.auth);
        expectError(reply, 413, 'too_many_rows', { rows: MAX_ROWS + 1, max_rows: MAX_ROWS });
        expect(await sql.count('quick')).toBe(0);
      });

      it(`a POST array of ${MAX_ROWS} rows and a single object are created`, async () => {
        const { http, sql, alice } = ctx();
        const many = await http.post('/quick', rows(MAX_ROWS), alice.auth);
        expect(many.status, many.text).toBe(201);
        expect(many.json).toHaveLength(MAX_ROWS);
        expect((await http.post('/quick', { body: 'one' }, alice.auth)).status).toBe(201);
        expect(await sql.count('quick')).toBe(MAX_ROWS + 1);
      });

      if (kind === 'sqlite') {
        it('SQLite cannot cancel a statement: the slow write completes (documented limitation)', async () => {
          const { http, sql, alice } = ctx();
          const started = performance.now();
          const reply = await http.post('/slow', { body: 'slow' }, alice.auth);
          expect(reply.status, reply.text).toBe(201);
          expect(performance.now() - started).toBeGreaterThan(TIMEOUT_MS);
          expect(await sql.count('slow')).toBe(1);
        }, 60_000);
        return;
      }

      timeoutIt(
        'a write whose statement runs past the timeout is cancelled: 503 query_timeout, nothing written',
        async () => {
          const { http, sql, alice } = ctx();
          const started = performance.now();
          const reply = await http.post('/slow', [{ body: 'a' }], alice.auth);
          const elapsed = performance.now() - started;
          expectError(reply, 503, 'query_timeout');
          expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
          expect(elapsed).toBeLessThan((SLEEP_S * 1000) / 2);
          expect(await sql.count('slow')).toBe(0);
          // The connection is healthy afterwards: the next requests are answered normally.
          expect((await http.get('/quick?count', alice.auth)).json).toEqual({ count: MAX_ROWS + 1 });
        },
        30_000,
      );

      if (kind === 'postgres' && rls) {
        timeoutIt(
          'a read under native RLS whose policy runs past the timeout: 503 query_timeout',
          async () => {
            const { http, sql, alice } = ctx();
            await sql.exec(`INSERT INTO slow_reads (user_id, body) VALUES (${alice.id}, 'x')`);
            // A DBA's own restrictive policy: rest leaves it in place and the request role is bound by it.
            await sql.exec(
              'CREATE POLICY dba_slow ON slow_reads AS RESTRICTIVE FOR SELECT TO PUBLIC USING (slow_true())',
            );
            const started = performance.now();
            const reply = await http.get('/slow_reads', alice.auth);
            expectError(reply, 503, 'query_timeout');
            expect(performance.now() - started).toBeLessThan((SLEEP_S * 1000) / 2);
            await sql.exec('DROP POLICY dba_slow ON slow_reads');
            const again = await http.get('/slow_reads?select=body', alice.auth);
            expect(again.json).toEqual([{ body: 'x' }]);
          },
          30_000,
        );
      }
    },
  );
}
