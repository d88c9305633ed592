// rest through PgBouncer in transaction mode (REST_TEST_PGBOUNCER_URL; .ci/run starts one): with
// -db.pooler transaction both enforcement paths serve reads, writes and their stored-row checks,
// sessions and policies as on a direct connection, between two servers — one LISTENing on
// -db.listen_url, one polling. Without the flag, a pooler is named at start-up or at its first
// 26000, never a 500.

import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isRestError } from '../../../errors/rest-error.js';
import { createPgAdapter, pgAdapterOnPool, type PgAdapter } from '../../../runtime/db/postgres/pg-adapter.js';
import {
  createTestDatabase,
  pgBouncerSkipReason,
  throughPgBouncer,
  type TestDatabase,
} from '../../support/databases.js';
import { client, type Client } from '../../support/http.js';
import { captureLog, startTestServer, testConfig, type TestServer } from '../../support/server.js';
import { bearer, setPolicies, startAuthSuite, tableRows, type PolicyContext } from './policy-support.js';

const reason = pgBouncerSkipReason();
const describeBouncer = (title: string, body: () => void): void =>
  void describe.skipIf(reason !== undefined)(
    `${title}${reason === undefined ? '' : ` (skipped: ${reason})`}`,
    body,
  );

const HINT = 'looks like a transaction pooler: start with -db.pooler transaction';

/** Polls `probe` until `done` says so or 2 s have passed; the last answer (SPEC: within 2 s). */
async function within2s<T>(probe: () => Promise<T>, done: (answer: T) => boolean): Promise<T> {
  const deadline = Date.now() + 2000;
  for (;;) {
    const answer = await probe();
    if (done(answer) || Date.now() > deadline) return answer;
    await new Promise((r) => setTimeout(r, 50));
  }
}

for (const rls of [true, false]) {
  describeBouncer(`through PgBouncer, -db.pooler transaction [postgres rls=${rls ? 'on' : 'off'}]`, () => {
    let ctx: PolicyContext;
    /** A second server of the same database without -db.listen_url: it polls. */
    let polling: TestServer;
    let other: Client;

    beforeAll(async () => {
      ctx = await startAuthSuite('postgres', {
        rls,
        pooler: { listen: true },
        serverDbUrl: async (url) => throughPgBouncer(url),
      });
      await setPolicies(ctx, [
        { table_name: 'notes', action: 'read', expression: 'user_id = auth_user.id' },
        { table_name: 'notes', action: 'create', expression: 'user_id = auth_user.id' },
        { table_name: 'notes', action: 'update', expression: 'user_id = auth_user.id' },
      ]);
      const { listenUrl: _listen, ...direct } = ctx.config.db;
      polling = await startTestServer({ ...ctx.config, db: direct });
      other = client(polling.url);
    }, 60_000);

    afterAll(async () => {
      await polling?.handle.close();
      await ctx?.server.handle.close();
      await ctx?.sql.close();
      await ctx?.db.drop();
    });

    it('says so in the start line, and polls where it has no URL to LISTEN on', () => {
      for (const server of [ctx.server, polling]) {
        const line = server.log.lines.find((l) => String(l['msg']).startsWith('listening on'));
        expect(String(line?.['msg'])).toContain('through a transaction pooler');
      }
    });

    it('reads and writes each user their own rows on both servers; a refused write stores nothing', async () => {
      const { http, alice, bob } = ctx;
      await ctx.sql.exec('DELETE FROM notes');
      const mine = await http.post('/notes', { user_id: alice.id, body: 'alice 1' }, alice.auth);
      expect(mine.status, mine.text).toBe(201);
      const theirs = await other.post('/notes', { user_id: bob.id, body: 'bob 1' }, bob.auth);
      expect(theirs.status, theirs.text).toBe(201);
      expect((await other.post('/notes', { user_id: bob.id, body: 'forged' }, alice.auth)).status).toBe(403);
      for (const server of [http, other]) {
        const read = await server.get('/notes?select=user_id,body', alice.auth);
        expect(read.json).toEqual([{ user_id: alice.id, body: 'alice 1' }]);
      }
      const aliceId = (mine.json as { id: number }).id;
      const bobId = (theirs.json as { id: number }).id;
      // The update's check on the stored row: alice may not hand her row to bob, nor touch his.
      expect((await other.patch(`/notes/${aliceId}`, { user_id: bob.id }, alice.auth)).status).toBe(403);
      const notHers = await http.patch(`/notes?id=eq.${bobId}`, { body: 'taken' }, alice.auth);
      expect(notHers.json).toEqual({ updated: 0 });
      const edited = await other.patch(`/notes/${aliceId}`, { body: 'alice 2' }, alice.auth);
      expect(edited.status, edited.text).toBe(200);
      expect(await tableRows(ctx, 'notes', ['user_id', 'body'])).toEqual([
        { user_id: alice.id, body: 'alice 2' },
        { user_id: bob.id, body: 'bob 1' },
      ]);
      // Many at once: each request's settings stay its own, on backends the pooler shares.
      const answers = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          (i % 2 === 0 ? http : other).get('/notes?select=user_id', i % 3 === 0 ? bob.auth : alice.auth),
        ),
      );
      answers.forEach((a, i) => expect(a.json).toEqual([{ user_id: i % 3 === 0 ? bob.id : alice.id }]));
    });

    it('a logout on one server ends the session on the other within 2 s', async () => {
      const login = await ctx.http.post('/auth/login', {
        username: ctx.bob.username,
        password: ctx.bob.password,
      });
      expect(login.status, login.text).toBe(200);
      const { token, refresh_token } = login.json as { token: string; refresh_token: string };
      expect((await other.get('/notes', bearer(token))).status).toBe(200);
      expect((await ctx.http.post('/auth/logout', { refresh_token }, bearer(token))).status).toBe(200);
      const refused = await within2s(
        () => other.get('/notes', bearer(token)),
        (r) => r.status === 401,
      );
      expect(refused.status).toBe(401);
    });

    it('a policy written through one server reaches the other within 2 s, both ways', async () => {
      await setPolicies(ctx, [
        { table_name: 'notes', action: 'read', expression: 'auth_user.is_authenticated' },
      ]);
      const all = await within2s(
        () => other.get('/notes?select=body&order=id', ctx.alice.auth),
        (r) => Array.isArray(r.json) && r.json.length === 2,
      );
      expect(all.json).toEqual([{ body: 'alice 2' }, { body: 'bob 1' }]);
      expect((await other.delete('/auth_policies?id=gt.3', ctx.admin.auth)).status).toBe(200);
      const written = await other.post(
        '/auth_policies',
        [{ table_name: 'notes', action: 'read', expression: 'user_id = auth_user.id', description: 'own' }],
        ctx.admin.auth,
      );
      expect(written.status, written.text).toBe(201);
      // The other server hears of it through LISTEN on -db.listen_url.
      const own = await within2s(
        () => ctx.http.get('/notes?select=body', ctx.alice.auth),
        (r) => Array.isArray(r.json) && r.json.length === 1,
      );
      expect(own.json).toEqual([{ body: 'alice 2' }]);
    });
  });
}

describeBouncer('through PgBouncer without -db.pooler [postgres]', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('postgres');
  });
  afterAll(async () => {
    await db?.drop();
  });

  for (const [how, statementTimeoutMs] of [
    ['PgBouncer refuses the statement timeout as a startup parameter', 10_000],
    ['no startup parameter: a session setting found on another connection', 0],
  ] as const) {
    it(`start-up exits 1 with one line naming the flag (${how})`, async () => {
      const url = throughPgBouncer(db.url);
      const error = await startTestServer({
        ...testConfig(url),
        db: { url, rls: false, statementTimeoutMs },
      }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isRestError(error) && [error.code, error.exitCode]).toEqual(['transaction_pooler', 1]);
      expect(String((error as Error).message)).toMatch(new RegExp(`^The PostgreSQL database at .+ ${HINT}$`));
    });
  }

  it('with -db.pooler transaction the statement timeout holds in every transaction, a setting of none', async () => {
    const adapter = await createPgAdapter(throughPgBouncer(db.url), {
      pooler: 'transaction',
      statementTimeoutMs: 200,
    });
    try {
      const slow = await adapter.query({ text: 'SELECT pg_sleep(2)', values: [] }).catch((e: unknown) => e);
      expect(isRestError(slow) && slow.code).toBe('query_timeout');
      const inTransaction = await adapter
        .transaction(async (tx) => tx.query({ text: 'SELECT pg_sleep(2)', values: [] }))
        .catch((e: unknown) => e);
      expect(isRestError(inTransaction) && inTransaction.code).toBe('query_timeout');
      // Outside rest's transactions the backends keep the server's own setting.
      const raw = new pg.Client({ connectionString: throughPgBouncer(db.url) });
      await raw.connect();
      const shown = await raw.query('SHOW statement_timeout');
      await raw.end();
      expect(shown.rows).toEqual([{ statement_timeout: '0' }]);
    } finally {
      await adapter.close();
    }
  });

  it('a statement whose backend changed (26000) answers 503 transaction_pooler, logs one line, and the next runs unnamed', async () => {
    const log = captureLog();
    const pool = new pg.Pool({
      connectionString: throughPgBouncer(db.url),
      max: 4,
      pipeline: true,
    } as pg.PoolConfig);
    const adapter: PgAdapter = pgAdapterOnPool(pool, { logger: log.logger });
    const holder = new pg.Client({ connectionString: throughPgBouncer(db.url) });
    try {
      const probe = { text: 'SELECT $1::int + 1 AS v', values: [1] };
      expect((await adapter.query(probe)).rows).toEqual([{ v: 2 }]);
      // Another client's transaction takes the backend the statement was prepared on (PgBouncer
      // hands out the one used last), so the next use of the name reaches another backend.
      await holder.connect();
      await holder.query('BEGIN');
      await holder.query('SELECT 1');
      const failures: unknown[] = [];
      for (let i = 0; i < 3; i += 1) {
        await adapter.query(probe).catch((e: unknown) => failures.push(e));
      }
      expect(failures.length).toBeGreaterThan(0);
      for (const e of failures) {
        expect(isRestError(e) && [e.code, e.status]).toEqual(['transaction_pooler', 503]);
      }
      const warned = log.lines.filter((l) => String(l['msg']).includes(HINT));
      expect(warned).toHaveLength(1);
      expect((await adapter.query(probe)).rows).toEqual([{ v: 2 }]);
    } finally {
      await holder.end().catch(() => undefined);
      await adapter.close();
    }
  });
});
