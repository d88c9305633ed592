// OneSync (runtime/db/postgres/one-sync.ts) on a real PostgreSQL: statements sent with one Sync
// share one implicit transaction — its local settings, its commit, its rollback at the first
// error — and the client stays usable and correctly paced (pipeline mode, as the adapter uses it).

import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OneSync, type OneSyncOutcome } from '../../runtime/db/postgres/one-sync.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';
import { serverIt } from '../support/server-only.js';

const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === 20
      ? (text: string) => `int8:${text}`
      : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};

const results = (outcome: OneSyncOutcome): readonly pg.QueryResult[] => {
  if (!outcome.ok) throw new Error(`expected success, got ${String(outcome.error)}`);
  return outcome.results;
};

const failure = (outcome: OneSyncOutcome): { index: number; code: unknown } => {
  if (outcome.ok) throw new Error('expected a failure');
  return { index: outcome.index, code: (outcome.error as { code?: unknown }).code };
};

/** The statement names PostgreSQL holds for `client`'s session. */
const preparedOn = async (client: pg.Client): Promise<string[]> =>
  (await client.query('SELECT name FROM pg_prepared_statements ORDER BY name')).rows.map((r) =>
    String((r as { name: unknown }).name),
  );

describe('OneSync [postgres]', () => {
  let db: TestDatabase;
  let client: pg.Client;
  let other: pg.Client;

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    client = new pg.Client({ connectionString: db.url, pipeline: true } as pg.ClientConfig);
    other = new pg.Client({ connectionString: db.url });
    await client.connect();
    await other.connect();
    await other.query('CREATE TABLE notes (id int PRIMARY KEY, body text NOT NULL)');
  });

  afterAll(async () => {
    await client?.end().catch(() => undefined);
    await other?.end().catch(() => undefined);
    await db?.drop();
  });

  it('runs the statements in one transaction: a local setting reaches the next statement and ends with the Sync', async () => {
    const outcome = await OneSync.run(
      client,
      [
        { text: `SELECT set_config('rest.probe', $1, true) AS set`, values: ['alice'] },
        {
          text: `SELECT current_setting('rest.probe', true) AS seen, txid_current() AS tx, 7::int8 AS n`,
          values: [],
        },
        { text: `SELECT txid_current() AS tx`, values: [] },
      ],
      types,
    );
    const [set, seen, again] = results(outcome);
    expect(set?.rows).toEqual([{ set: 'alice' }]);
    expect(seen?.rows[0]).toMatchObject({ seen: 'alice', n: 'int8:7' });
    expect(again?.rows[0]?.['tx']).toBe(seen?.rows[0]?.['tx']);
    const after = await client.query(`SELECT coalesce(current_setting('rest.probe', true), '') AS seen`);
    expect(after.rows).toEqual([{ seen: '' }]);
    expect(client.getTransactionStatus()).toBe('I');
  });

  it('runs the first `rowless` statements for their effect only: no rows, no fields, the rest intact', async () => {
    const outcome = await OneSync.run(
      client,
      [
        { text: `SELECT set_config('rest.probe', $1, true) AS set, 1 AS one`, values: ['bob'] },
        { name: 'one_sync_rowless', text: `SELECT set_config('rest.other', 'x', true) AS set`, values: [] },
        { text: `SELECT current_setting('rest.probe') AS seen, 5::int8 AS n`, values: [] },
      ],
      types,
      2,
    );
    const [set, other, seen] = results(outcome);
    expect([set?.rows, set?.fields, other?.rows, other?.fields]).toEqual([[], [], [], []]);
    expect(seen?.rows).toEqual([{ seen: 'bob', n: 'int8:5' }]);
    expect(seen?.fields.map((f) => f.name)).toEqual(['seen', 'n']);
    // A rowless statement that fails is still named by its index, and the client stays usable.
    const failed = await OneSync.run(
      client,
      [
        { text: 'SELECT 1 / $1::int AS x', values: [0] },
        { text: 'SELECT 2 AS y', values: [] },
      ],
      types,
      1,
    );
    expect(failure(failed)).toEqual({ index: 0, code: '22012' });
    expect((await client.query('SELECT 3 AS z')).rows).toEqual([{ z: 3 }]);
  });

  it('commits a write at the Sync', async () => {
    const outcome = await OneSync.run(
      client,
      [
        { text: `SELECT set_config('rest.probe', 'x', true)`, values: [] },
        { text: 'INSERT INTO notes (id, body) VALUES ($1, $2) RETURNING id', values: [1, 'kept'] },
      ],
      types,
    );
    expect(results(outcome)[1]?.rows).toEqual([{ id: 1 }]);
    expect(results(outcome)[1]?.rowCount).toBe(1);
    expect((await other.query('SELECT body FROM notes WHERE id = 1')).rows).toEqual([{ body: 'kept' }]);
  });

  it('a failing first statement skips the rest and rolls back; the client stays usable', async () => {
    const outcome = await OneSync.run(
      client,
      [
        { text: 'SELECT 1 / $1::int AS boom', values: [0] },
        { text: 'INSERT INTO notes (id, body) VALUES ($1, $2)', values: [2, 'never'] },
      ],
      types,
    );
    expect(failure(outcome)).toEqual({ index: 0, code: '22012' });
    expect((await other.query('SELECT count(*)::int AS n FROM notes WHERE id = 2')).rows).toEqual([{ n: 0 }]);
    expect(client.getTransactionStatus()).toBe('I');
    expect((await client.query('SELECT 41 + 1 AS v')).rows).toEqual([{ v: 42 }]);
  });

  it('a failing later statement rolls back the earlier ones and names its index', async () => {
    const outcome = await OneSync.run(
      client,
      [
        { text: 'INSERT INTO notes (id, body) VALUES ($1, $2)', values: [3, 'rolled back'] },
        { text: 'INSERT INTO notes (id, body) VALUES ($1, $2)', values: [1, 'duplicate'] },
      ],
      types,
    );
    expect(failure(outcome)).toEqual({ index: 1, code: '23505' });
    expect((await other.query('SELECT count(*)::int AS n FROM notes WHERE id = 3')).rows).toEqual([{ n: 0 }]);
    expect(client.getTransactionStatus()).toBe('I');
  });

  it('shares named statements with ordinary queries both ways', async () => {
    // Prepared by an ordinary query, bound here.
    const joined = {
      name: 'one_sync_joined',
      text: 'SELECT $1::text || $2::text AS joined',
      values: ['a', 'b'],
    };
    expect((await client.query(joined)).rows).toEqual([{ joined: 'ab' }]);
    const first = await OneSync.run(
      client,
      [
        { ...joined, values: ['c', 'd'] },
        { ...joined, values: ['e', 'f'] },
      ],
      types,
    );
    expect(results(first).map((r) => r.rows)).toEqual([[{ joined: 'cd' }], [{ joined: 'ef' }]]);
    // Parsed here (with its first use), then bound by OneSync and by an ordinary query alike.
    const doubled = { name: 'one_sync_doubled', text: 'SELECT $1::int * 2 AS doubled', values: [2] };
    expect(results(await OneSync.run(client, [doubled], types))[0]?.rows).toEqual([{ doubled: 4 }]);
    expect(results(await OneSync.run(client, [{ ...doubled, values: [3] }], types))[0]?.rows).toEqual([
      { doubled: 6 },
    ]);
    expect((await client.query({ ...doubled, values: [4] })).rows).toEqual([{ doubled: 8 }]);
  });

  it('knows which names PostgreSQL kept: a Parse that completed, even when its statement then failed', async () => {
    const fails = { name: 'one_sync_fails', text: 'SELECT 1 / $1::int AS q', values: [0] };
    const after = { name: 'one_sync_after', text: 'SELECT $1::int AS v', values: [1] };
    // The first statement is parsed, then fails at execution; the second is skipped, never parsed.
    expect(failure(await OneSync.run(client, [fails, after], types))).toEqual({ index: 0, code: '22012' });
    expect(await preparedOn(client)).toContain('one_sync_fails');
    expect(await preparedOn(client)).not.toContain('one_sync_after');
    // Both are used again on the same client: the kept one is bound, the other parsed.
    const again = await OneSync.run(
      client,
      [
        { ...fails, values: [2] },
        { ...after, values: [3] },
      ],
      types,
    );
    expect(results(again).map((r) => r.rows)).toEqual([[{ q: 0 }], [{ v: 3 }]]);
    // A value refused when bound (invalid input for its type) leaves the name parsed and kept too.
    const cast = { name: 'one_sync_cast', text: 'SELECT $1::uuid AS u', values: ['not-a-uuid'] };
    expect(failure(await OneSync.run(client, [cast], types))).toEqual({ index: 0, code: '22P02' });
    const uuid = '00000000-0000-4000-8000-000000000001';
    expect(results(await OneSync.run(client, [{ ...cast, values: [uuid] }], types))[0]?.rows).toEqual([
      { u: uuid },
    ]);
    // A Parse that fails keeps nothing: the name is parsed again by its next use.
    const broken = { name: 'one_sync_broken', text: 'SELECT nosuch FROM notes', values: [] };
    expect(failure(await OneSync.run(client, [broken], types))).toEqual({ index: 0, code: '42703' });
    expect(await preparedOn(client)).not.toContain('one_sync_broken');
    expect(failure(await OneSync.run(client, [broken], types))).toEqual({ index: 0, code: '42703' });
  });

  it('does not bind a name another query on the client is still parsing: it parses its text unnamed', async () => {
    const probe = { name: 'one_sync_pending', text: 'SELECT $1::int + 1 AS v', values: [1] };
    // Both are on the wire before either is answered; the first fails before its Parse of the name.
    const first = OneSync.run(client, [{ text: 'SELECT 1 / 0', values: [] }, probe], types);
    const second = OneSync.run(client, [{ ...probe, values: [2] }], types);
    expect(failure(await first)).toEqual({ index: 0, code: '22012' });
    expect(results(await second)[0]?.rows).toEqual([{ v: 3 }]);
    // The name was never kept: the next use parses it.
    expect(results(await OneSync.run(client, [{ ...probe, values: [5] }], types))[0]?.rows).toEqual([
      { v: 6 },
    ]);
  });

  it('keeps the order of queries queued around it on the same client', async () => {
    const before = client.query('SELECT 1 AS v');
    const middle = OneSync.run(
      client,
      [
        { text: 'SELECT 2 AS v', values: [] },
        { text: 'SELECT 3 AS v', values: [] },
      ],
      types,
    );
    const failing = OneSync.run(client, [{ text: 'SELECT 1 / 0 AS v', values: [] }], types);
    const after = client.query('SELECT 4 AS v');
    expect((await before).rows).toEqual([{ v: 1 }]);
    expect(results(await middle).map((r) => r.rows)).toEqual([[{ v: 2 }], [{ v: 3 }]]);
    expect(failure(await failing)).toEqual({ index: 0, code: '22012' });
    expect((await after).rows).toEqual([{ v: 4 }]);
  });

  serverIt()(
    "fails when the connection dies: the server's FATAL error, or a rejection when the socket goes first",
    async () => {
      const doomed = new pg.Client({ connectionString: db.url, pipeline: true } as pg.ClientConfig);
      await doomed.connect();
      doomed.on('error', () => undefined);
      const pid = (await doomed.query('SELECT pg_backend_pid() AS pid')).rows[0]?.['pid'] as number;
      const running = OneSync.run(doomed, [{ text: 'SELECT pg_sleep(5)', values: [] }], types);
      await other.query('SELECT pg_terminate_backend($1)', [pid]);
      const settled = await running.then(
        (outcome) => failure(outcome).code,
        (e: unknown) => (e instanceof Error ? 'rejected' : 'rejected with a non-error'),
      );
      expect(['57P01', 'rejected']).toContain(settled);
      await expect(doomed.query('SELECT 1')).rejects.toBeDefined();
      await doomed.end().catch(() => undefined);
    },
  );
});
