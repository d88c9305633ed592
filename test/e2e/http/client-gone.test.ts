// Hostile load over real HTTP (docs/operations.md "Clients that go away"): clients that send a
// slow write and close their sockets leave nothing running — a request still waiting for a
// database connection is dropped, a running statement is cancelled (PostgreSQL with native RLS and
// without: a CancelRequest; MariaDB: KILL QUERY) — and another user is served at once; more
// requests waiting for a connection than -db.max_waiting are refused at once with 503 overloaded
// and Retry-After. The slow statement is a BEFORE INSERT trigger that sleeps far longer than the
// bound the checks poll with, and the statement timeout is longer still: what ends the statements
// early is the cancel. The burst of the last case closes 5 ms after sending, as an attacker's
// clients would. SQLite runs each statement to its end (docs/operations.md): no case here.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendAndHold } from '../../../bench/abandoned-request.js';
import type { DialectName } from '../../../compiler/types.js';
import { createTestDatabase, serverSkipReason, type TestDatabase } from '../../support/databases.js';
import { client, type Client, type Reply } from '../../support/http.js';
import { pollUntil } from '../../support/poll.js';
import { newSecret } from '../../support/secret.js';
import {
  openRawSql,
  startTestServer,
  testConfig,
  type RawSql,
  type TestServer,
} from '../../support/server.js';
import { expectError } from './matrix.js';
import { bearer } from './policy-support.js';

type Kind = Exclude<DialectName, 'sqlite'>;

/** How long a slow write would run if nothing cancelled it, and the statement timeout. */
const SLEEP_S = 60;
const STATEMENT_TIMEOUT_MS = 120_000;
/** The checks poll this long at most: far less than SLEEP_S, so only a cancel can pass them. */
const POLL_LIMIT_MS = 20_000;
const ABANDONED = 30;
const MAX_WAITING = 12;

const DDL: Readonly<Record<Kind, readonly string[]>> = {
  postgres: [
    'CREATE TABLE quick (id serial PRIMARY KEY, user_id integer, body text)',
    'CREATE TABLE slow (id serial PRIMARY KEY, user_id integer, body text)',
    `CREATE FUNCTION slow_insert() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(${SLEEP_S}); RETURN NEW; END $$`,
    'CREATE TRIGGER slow_insert BEFORE INSERT ON slow FOR EACH ROW EXECUTE FUNCTION slow_insert()',
  ],
  mysql: [
    'CREATE TABLE quick (id int AUTO_INCREMENT PRIMARY KEY, user_id int, body text)',
    'CREATE TABLE slow (id int AUTO_INCREMENT PRIMARY KEY, user_id int, body text)',
    `CREATE TRIGGER slow_insert BEFORE INSERT ON slow FOR EACH ROW DO SLEEP(${SLEEP_S})`,
  ],
};

interface Target {
  readonly kind: Kind;
  readonly rls: boolean;
}

const TARGETS: readonly Target[] = [
  { kind: 'postgres', rls: false },
  { kind: 'postgres', rls: true },
  { kind: 'mysql', rls: false },
];

interface Suite {
  readonly db: TestDatabase;
  readonly sql: RawSql;
  readonly server: TestServer;
  readonly http: Client;
  readonly token: string;
}

async function start({ kind, rls }: Target): Promise<Suite> {
  const db = await createTestDatabase(kind);
  const sql = await openRawSql(db);
  for (const ddl of DDL[kind]) await sql.exec(ddl);
  const base = testConfig(db.url);
  const server = await startTestServer({
    ...base,
    db: { url: db.url, rls, statementTimeoutMs: STATEMENT_TIMEOUT_MS, maxWaiting: MAX_WAITING },
    auth: { enabled: true, secret: newSecret(), tokenTtlSeconds: 3600 },
  });
  const http = client(server.url);
  expect((await http.post('/auth/setup', {})).status).toBe(201);
  const password = 'alice password';
  expect((await http.post('/auth/register', { username: 'alice', password })).status).toBe(201);
  const login = await http.post('/auth/login', { username: 'alice', password });
  return { db, sql, server, http, token: (login.json as { token: string }).token };
}

/** The slow writes the database is running now (sleeping in their trigger). */
async function slowRunning(sql: RawSql, kind: Kind): Promise<number> {
  const rows = await sql.rows(
    kind === 'postgres'
      ? `SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE datname = current_database() AND application_name = 'rest' AND wait_event = 'PgSleep'`
      : `SELECT count(*) AS n FROM information_schema.PROCESSLIST
         WHERE DB = DATABASE() AND STATE = 'User sleep'`,
  );
  return Number(rows[0]?.['n']);
}

/**
 * What an abandoned request ends as. A cancel sent for one abandoned statement can meet the next
 * statement on its lane (runtime/db/postgres/pg-lanes.ts); when that request's own close has not
 * reached the server yet, it ends as a cancelled statement (503 query_timeout) — also abandoned,
 * also nothing written.
 */
const ACCOUNTED = ['client_gone', 'overloaded', 'query_timeout'] as const;

const codesLogged = (server: TestServer, code: string): number =>
  server.log.lines.filter((l) => l['code'] === code).length;

for (const target of TARGETS) {
  const { kind, rls } = target;
  const label = kind === 'postgres' ? `${kind} rls=${rls ? 'on' : 'off'}` : kind;
  const reason = serverSkipReason(kind);
  describe.skipIf(reason !== undefined)(
    `clients that go away [${label}]${reason === undefined ? '' : ` — ${reason}`}`,
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

      it(`${ABANDONED} slow writes whose clients close: none keeps running, none is written, another user is served`, async () => {
        const { server, sql, http, token } = ctx();
        const gone = codesLogged(server, 'client_gone');
        const accounted = (): number => ACCOUNTED.reduce((n, code) => n + codesLogged(server, code), 0);
        const before = accounted();
        const sockets = await Promise.all(
          Array.from({ length: ABANDONED }, (_, i) =>
            sendAndHold(server.url, '/slow', token, JSON.stringify({ body: `abandoned ${i}` })),
          ),
        );
        // Some are running (sleeping in the trigger); the others wait for a connection or were refused.
        await pollUntil(
          'slow writes are running',
          async () => (await slowRunning(sql, kind)) > 0,
          POLL_LIMIT_MS,
        );
        for (const socket of sockets) socket.destroy();
        // Each one is accounted for: dropped or cancelled (client_gone), refused at once (overloaded),
        // or cancelled before the server saw its client go (query_timeout, see ACCOUNTED).
        await pollUntil(
          'every abandoned request was dropped, cancelled or refused',
          () => accounted() - before === ABANDONED,
          POLL_LIMIT_MS,
        );
        expect(codesLogged(server, 'client_gone') - gone).toBeGreaterThan(0);
        // Nothing is left running in the database, and nothing was written.
        await pollUntil(
          'no slow write is running',
          async () => (await slowRunning(sql, kind)) === 0,
          POLL_LIMIT_MS,
        );
        expect(await sql.count('slow')).toBe(0);
        // Another user's simple request is served.
        const read = await http.get('/quick', bearer(token));
        expect(read.status, read.text).toBe(200);
        const write = await http.post('/quick', { body: 'after' }, bearer(token));
        expect(write.status, write.text).toBe(201);
      }, 90_000);

      it(`more requests waiting for a connection than -db.max_waiting (${MAX_WAITING}): 503 overloaded with Retry-After, at once`, async () => {
        const { server, sql } = ctx();
        const aborts: AbortController[] = [];
        const replies: Reply[] = [];
        const count = 60;
        const pending = Array.from({ length: count }, (_, i) => {
          const abort = new AbortController();
          aborts.push(abort);
          return fetch(`${server.url}/slow`, {
            method: 'POST',
            headers: { authorization: `Bearer ${ctx().token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ body: `crowd ${i}` }),
            signal: abort.signal,
          }).then(
            async (r) => {
              const text = await r.text();
              replies.push({ status: r.status, headers: r.headers, text, json: JSON.parse(text) as unknown });
            },
            () => undefined,
          );
        });
        try {
          await pollUntil('a request was refused', () => replies.length > 0, POLL_LIMIT_MS);
          // Refused at once: the slow writes that were let in are running (they would for 60 s),
          // and none of them has been answered.
          await pollUntil(
            'slow writes are running',
            async () => (await slowRunning(sql, kind)) > 0,
            POLL_LIMIT_MS,
          );
          expect(replies.length).toBeLessThan(count);
          const [first] = replies;
          if (first === undefined) throw new Error('no reply');
          expectError(first, 503, 'overloaded');
          expect(first.headers.get('retry-after')).toBe('1');
        } finally {
          // Whatever happened above, the slow writes are abandoned (and cancelled) before the next case.
          for (const abort of aborts) abort.abort();
          await Promise.all(pending);
        }
        // Every reply that came is a refusal; the rest were abandoned and are cancelled in turn.
        for (const reply of replies) expectError(reply, 503, 'overloaded');
        await pollUntil(
          'no slow write is running',
          async () => (await slowRunning(sql, kind)) === 0,
          POLL_LIMIT_MS,
        );
        expect(await sql.count('slow')).toBe(0);
      }, 90_000);

      it(`${ABANDONED} slow writes whose clients close 5 ms after sending: nothing of theirs runs or is written`, async () => {
        const { sql, http, token } = ctx();
        const sockets = await Promise.all(
          Array.from({ length: ABANDONED }, (_, i) =>
            sendAndHold(ctx().server.url, '/slow', token, JSON.stringify({ body: `burst ${i}` })),
          ),
        );
        await new Promise((resolve) => setTimeout(resolve, 5));
        for (const socket of sockets) socket.destroy();
        // Some requests may reach the database only after their client closed; nothing of theirs
        // is running on ten looks in a row (one that ran to its end would sleep SLEEP_S).
        let quiet = 0;
        await pollUntil(
          'no slow write is running, ten looks in a row',
          async () => {
            quiet = (await slowRunning(sql, kind)) === 0 ? quiet + 1 : 0;
            return quiet >= 10;
          },
          POLL_LIMIT_MS,
        );
        expect(await sql.count('slow')).toBe(0);
        const write = await http.post('/quick', { body: 'after the burst' }, bearer(token));
        expect(write.status, write.text).toBe(201);
      }, 90_000);
    },
  );
}
