// Lanes (runtime/db/postgres/pg-lanes.ts) through the PostgreSQL adapter on a real server: work of
// one Sync from concurrent requests shares a few pipelined clients, a turn's requests on a lane leave
// in one write, each request keeps its own answer and its own failure, and a lane that failed is
// replaced.

import type { Socket } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgAdapterOnPool, type PgAdapter } from '../../runtime/db/postgres/pg-adapter.js';
import { LANE_DEPTH } from '../../runtime/db/postgres/pg-lanes.js';
import { isRestError } from '../../errors/rest-error.js';
import { closeAndDrop, createTestDatabase, withPg, type TestDatabase } from '../support/databases.js';
import { serverIt } from '../support/server-only.js';

const sql = (text: string, values: readonly unknown[] = []) => ({ text, values });

/** Counts the writes each of the pool's sockets makes (one per system call: `_write` or `_writev`). */
function countWrites(pool: pg.Pool): { total(): number } {
  let writes = 0;
  pool.on('connect', (client) => {
    const stream = client.connection.stream as Socket & {
      _write: (...a: unknown[]) => unknown;
      _writev?: (...a: unknown[]) => unknown;
    };
    const write = stream._write.bind(stream);
    stream._write = (...a: unknown[]) => {
      writes += 1;
      return write(...a);
    };
    const writev = stream._writev?.bind(stream);
    if (writev !== undefined) {
      stream._writev = (...a: unknown[]) => {
        writes += 1;
        return writev(...a);
      };
    }
  });
  return { total: () => writes };
}

const pidOf = async (adapter: PgAdapter): Promise<number> =>
  Number((await adapter.query(sql('SELECT pg_backend_pid() AS pid'))).rows[0]?.['pid']);

describe('lanes [postgres]', () => {
  let db: TestDatabase;
  const adapters: PgAdapter[] = [];
  const open = (max: number): { adapter: PgAdapter; writes: { total(): number } } => {
    const pool = new pg.Pool({ connectionString: db.url, max, pipeline: true } as pg.PoolConfig);
    const writes = countWrites(pool);
    const adapter = pgAdapterOnPool(pool);
    adapters.push(adapter);
    return { adapter, writes };
  };

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    await withPg(db.url, (c) => c.query('CREATE TABLE notes (id int PRIMARY KEY, body text NOT NULL)'));
  });

  afterAll(async () => {
    await closeAndDrop(db, adapters);
  });

  it('concurrent statements share the lanes (half the pool), each with its own answer', async () => {
    const { adapter } = open(4);
    await pidOf(adapter);
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        adapter.query(sql('SELECT $1::int AS v, pg_backend_pid() AS pid', [i])),
      ),
    );
    expect(answers.map((a) => a.rows[0]?.['v'])).toEqual(Array.from({ length: 40 }, (_, i) => i));
    expect(new Set(answers.map((a) => a.rows[0]?.['pid'])).size).toBeLessThanOrEqual(2);
  });

  it('the requests of one turn on a lane leave in one write', async () => {
    const { adapter, writes } = open(2);
    await pidOf(adapter);
    const before = writes.total();
    const answers = await Promise.all(
      Array.from({ length: LANE_DEPTH }, (_, i) => adapter.query(sql('SELECT $1::int * 2 AS v', [i]))),
    );
    expect(answers.map((a) => a.rows[0]?.['v'])).toEqual(Array.from({ length: LANE_DEPTH }, (_, i) => i * 2));
    expect(writes.total() - before).toBe(1);
  });

  it('a lane carries at most LANE_DEPTH requests at once; the others wait their turn and are all answered', async () => {
    const { adapter, writes } = open(2);
    await pidOf(adapter);
    const before = writes.total();
    const count = 4 * LANE_DEPTH;
    const answers = await Promise.all(
      Array.from({ length: count }, (_, i) => adapter.query(sql('SELECT $1::int * 3 AS v', [i]))),
    );
    expect(answers.map((a) => a.rows[0]?.['v'])).toEqual(Array.from({ length: count }, (_, i) => i * 3));
    // Sent a depth at a time as answers free the lane: more than one write, at most one per request.
    expect(writes.total() - before).toBeGreaterThanOrEqual(count / LANE_DEPTH);
    expect(writes.total() - before).toBeLessThanOrEqual(count);
  });

  serverIt()(
    'a stalled lane holds up at most LANE_DEPTH - 1 other requests: the rest go to the lane that frees',
    async () => {
      const { adapter } = open(4);
      // Two lanes: the second opens because the first is busy.
      await Promise.all([pidOf(adapter), pidOf(adapter)]);
      const slow = adapter.query(sql('SELECT pg_sleep(0.5), pg_backend_pid() AS pid'));
      const quick = await Promise.all(
        Array.from({ length: 6 * LANE_DEPTH }, (_, i) =>
          adapter.query(sql('SELECT $1::int AS v, pg_backend_pid() AS pid', [i])),
        ),
      );
      const stalled = Number((await slow).rows[0]?.['pid']);
      expect(quick.map((a) => a.rows[0]?.['v'])).toEqual(Array.from({ length: 6 * LANE_DEPTH }, (_, i) => i));
      const behindSlow = quick.filter((a) => Number(a.rows[0]?.['pid']) === stalled).length;
      expect(behindSlow).toBeLessThanOrEqual(LANE_DEPTH - 1);
    },
  );

  it("one request's transaction-local settings never reach another's statement on the same lane", async () => {
    const { adapter } = open(2);
    await pidOf(adapter);
    const as = (user: string | undefined) =>
      adapter.pipelined(
        {
          opening: user === undefined ? [] : [sql(`SELECT set_config('rest.user_id', $1, true)`, [user])],
          mode: 'single',
        },
        (session) =>
          session.query(
            sql(
              `SELECT coalesce(nullif(current_setting('rest.user_id', true), ''), 'none') AS seen, pg_backend_pid() AS pid`,
            ),
          ),
      );
    const answers = await Promise.all(['1', '2', undefined, '3', undefined, '4'].map(as));
    expect(answers.map((a) => a.rows[0]?.['seen'])).toEqual(['1', '2', 'none', '3', 'none', '4']);
    expect(new Set(answers.map((a) => a.rows[0]?.['pid'])).size).toBe(1);
  });

  it('a failing request leaves the others on its lane untouched, its write rolled back', async () => {
    const { adapter } = open(2);
    await pidOf(adapter);
    const settled = await Promise.allSettled(
      Array.from({ length: 6 }, (_, i) =>
        i === 3
          ? adapter.query(sql('INSERT INTO notes (id, body) VALUES (100, $1), (100, $1)', ['twice']))
          : adapter.query(sql('INSERT INTO notes (id, body) VALUES ($1, $2) RETURNING id', [i, 'kept'])),
      ),
    );
    expect(settled.map((s) => s.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
    ]);
    const failed = settled[3];
    expect(failed?.status === 'rejected' && isRestError(failed.reason) && failed.reason.code).toBe(
      'unique_violation',
    );
    const ids = await adapter.query(sql('SELECT id FROM notes ORDER BY id'));
    expect(ids.rows.map((r) => r['id'])).toEqual([0, 1, 2, 4, 5]);
  });

  it('a statement name another request is still parsing is not bound: a failure before its Parse costs only that request', async () => {
    const { adapter } = open(2);
    await pidOf(adapter);
    // Both requests send the same new statement (one name) in one turn on the one lane; the first
    // fails in its opening statement, so PostgreSQL never parses the name for it.
    const request = (divisor: number) =>
      adapter.pipelined(
        { opening: [sql('SELECT 1 / $1::int AS gate', [divisor])], mode: 'single' },
        (session) => session.query(sql('SELECT $1::text AS echoed, 17 AS lanes_probe', ['x'])),
      );
    const [failed, passed] = await Promise.allSettled([request(0), request(1)]);
    expect(failed?.status).toBe('rejected');
    expect(passed?.status === 'fulfilled' && passed.value.rows).toEqual([{ echoed: 'x', lanes_probe: 17 }]);
    expect((await request(1)).rows).toEqual([{ echoed: 'x', lanes_probe: 17 }]);
  });

  // On PGlite every connection reports the one backend's pid.
  serverIt()(
    'a lane prepared before a schema change takes no new statement: the next runs on a new connection',
    async () => {
      const { adapter } = open(2);
      await withPg(db.url, (c) =>
        c.query('CREATE TABLE shapes (id int PRIMARY KEY, size int); INSERT INTO shapes VALUES (1, 7)'),
      );
      await adapter.introspect();
      const select = sql('SELECT size, pg_backend_pid() AS pid FROM shapes');
      const before = await adapter.query(select);
      expect(before.rows[0]?.['size']).toBe(7);
      await withPg(db.url, (c) => c.query('ALTER TABLE shapes ALTER COLUMN size TYPE text'));
      await adapter.introspect();
      // Statements prepared on the old lane may describe other result types; pg-prepared.ts would
      // send every statement there unnamed (parsed each time) from now on. The lane is replaced.
      const after = await adapter.query(select);
      expect(after.rows[0]?.['size']).toBe('7');
      expect(after.rows[0]?.['pid']).not.toBe(before.rows[0]?.['pid']);
    },
  );

  serverIt()(
    'a lane whose backend was terminated is replaced: its requests fail as unavailable, the next succeed',
    async () => {
      const { adapter } = open(2);
      const pid = await pidOf(adapter);
      const sleeping = adapter.query(sql('SELECT pg_sleep(5)')).then(
        () => undefined,
        (e: unknown) => e,
      );
      await withPg(db.url, (c) => c.query('SELECT pg_terminate_backend($1)', [pid]));
      const error = await sleeping;
      expect(isRestError(error) && error.category).toBe('unavailable');
      const next = await pidOf(adapter);
      expect(next).not.toBe(pid);
    },
  );

  serverIt()('requests waiting for a lane whose backend was terminated run on a new lane', async () => {
    const { adapter } = open(2);
    const pid = await pidOf(adapter);
    const onLane = Array.from({ length: LANE_DEPTH }, () =>
      adapter.query(sql('SELECT pg_sleep(5)')).then(
        () => undefined,
        (e: unknown) => e,
      ),
    );
    const waiting = Array.from({ length: 2 }, (_, i) =>
      adapter.query(sql('SELECT $1::int AS v, pg_backend_pid() AS pid', [i])),
    );
    await withPg(db.url, (c) => c.query('SELECT pg_terminate_backend($1)', [pid]));
    for (const error of await Promise.all(onLane)) {
      expect(isRestError(error) && error.category).toBe('unavailable');
    }
    const answers = await Promise.all(waiting);
    expect(answers.map((a) => a.rows[0]?.['v'])).toEqual([0, 1]);
    for (const a of answers) expect(a.rows[0]?.['pid']).not.toBe(pid);
  });

  it('a client that reports its backend terminated while it closes does not crash the process', async () => {
    // What CI met once: DROP DATABASE … WITH (FORCE) right after close, while the lanes' clients
    // were still ending; pg reported the FATAL through the pool, which had no error listener.
    const pool = new pg.Pool({ connectionString: db.url, max: 2, pipeline: true } as pg.PoolConfig);
    const clients: pg.Client[] = [];
    pool.on('connect', (client) => clients.push(client));
    const adapter = pgAdapterOnPool(pool);
    adapters.push(adapter);
    await Promise.all([pidOf(adapter), pidOf(adapter)]);
    await adapter.close();
    expect(clients.length).toBeGreaterThan(0);
    for (const client of clients) {
      expect(() =>
        client.emit('error', new Error('terminating connection due to administrator command')),
      ).not.toThrow();
    }
  });

  it('close waits for the requests in flight on the lanes', async () => {
    const { adapter } = open(2);
    await pidOf(adapter);
    const running = adapter.query(sql('SELECT pg_sleep(0.2), 5 AS v'));
    await new Promise((resolve) => setImmediate(resolve));
    await adapter.close();
    expect((await running).rows[0]?.['v']).toBe(5);
    await expect(adapter.query(sql('SELECT 1'))).rejects.toThrow();
  });

  it('close waits for the requests still waiting for a lane', async () => {
    const { adapter } = open(2);
    await pidOf(adapter);
    const count = 2 * LANE_DEPTH + 1;
    const running = Promise.all(
      Array.from({ length: count }, (_, i) => adapter.query(sql('SELECT pg_sleep(0.05), $1::int AS v', [i]))),
    );
    await new Promise((resolve) => setImmediate(resolve));
    await adapter.close();
    expect((await running).map((a) => a.rows[0]?.['v'])).toEqual(Array.from({ length: count }, (_, i) => i));
  });

  // Clients that go away (RunOptions.signal): the lane of a pool of 2 carries LANE_DEPTH statements
  // that would sleep 30 s; the test's own timeout is far shorter, so only cancels let it pass.
  serverIt()(
    'abandoned statements on a lane are cancelled, a queued one never runs, one past max_waiting is refused',
    async () => {
      const pool = new pg.Pool({ connectionString: db.url, max: 2, pipeline: true } as pg.PoolConfig);
      const adapter = pgAdapterOnPool(pool, { maxWaiting: 1 });
      adapters.push(adapter);
      await pidOf(adapter);
      const sleepers = Array.from({ length: LANE_DEPTH }, () => {
        const gone = new AbortController();
        const outcome = adapter.query(sql('SELECT pg_sleep(30)'), { signal: gone.signal }).then(
          () => 'ran',
          (e: unknown) => (isRestError(e) ? e.code : 'other'),
        );
        return { gone, outcome };
      });
      // The lane is full: this one waits in the queue, the next is one too many.
      const queuedGone = new AbortController();
      const queued = adapter
        .query(sql("INSERT INTO notes VALUES (900, 'never')"), { signal: queuedGone.signal })
        .then(
          () => 'ran',
          (e: unknown) => (isRestError(e) ? e.code : 'other'),
        );
      const refused = await adapter.query(sql('SELECT 1'), { signal: new AbortController().signal }).then(
        () => 'ran',
        (e: unknown) => (isRestError(e) ? [e.code, e.headers] : 'other'),
      );
      expect(refused).toEqual(['overloaded', { 'Retry-After': '1' }]);
      queuedGone.abort();
      expect(await queued).toBe('client_gone');
      for (const { gone } of sleepers) gone.abort();
      expect(await Promise.all(sleepers.map((s) => s.outcome))).toEqual(
        Array.from({ length: LANE_DEPTH }, () => 'client_gone'),
      );
      // The lane serves again, and the queued write never ran.
      const rows = await adapter.query(sql('SELECT count(*)::int AS n FROM notes WHERE id = 900'));
      expect(rows.rows).toEqual([{ n: 0 }]);
    },
    15_000,
  );
});
