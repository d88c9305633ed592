// One round trip to PostgreSQL for every table request, on both enforcement paths: the
// server connects through the bench's counting proxy and each request, sent alone, must cost
// exactly one flight of client messages — reads, creates of one and of several rows (their check
// included), updates, deletes, and a create whose check refuses a row (nothing is written).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPgCountingProxy, type PgCountingProxy } from '../../../bench/pg-proxy.js';
import type { Reply } from '../../support/http.js';
import { resetRows, setPolicies, startAuthSuite, tableRows, type PolicyContext } from './policy-support.js';

describe.each([
  { path: 'portable', rls: false },
  { path: 'native RLS', rls: true },
])('round trips per request (postgres, $path)', ({ rls }) => {
  let ctx: PolicyContext | undefined;
  let proxy: PgCountingProxy | undefined;
  const suite = (): PolicyContext => {
    if (ctx === undefined) throw new Error('the suite did not start');
    return ctx;
  };

  /** The reply to `send` and the round trips the server made while answering it. */
  async function counted(send: () => Promise<Reply>): Promise<{ reply: Reply; flights: number }> {
    if (proxy === undefined) throw new Error('no proxy');
    const before = proxy.counts().flights;
    const reply = await send();
    return { reply, flights: proxy.counts().flights - before };
  }

  beforeAll(async () => {
    ctx = await startAuthSuite('postgres', {
      rls,
      // A row that leaves `body` out passes the check with its default.
      ddl: { postgres: ["ALTER TABLE notes ALTER COLUMN body SET DEFAULT 'default'"], mysql: [], sqlite: [] },
      serverDbUrl: async (url) => {
        proxy = await startPgCountingProxy(url);
        return proxy.url;
      },
    });
    await setPolicies(ctx, [
      { table_name: 'notes', action: 'all', expression: "user_id = auth_user.id and body <> 'forbidden'" },
    ]);
    await resetRows(ctx, 'notes', ['id', 'user_id', 'body'], [[1, ctx.alice.id, 'one']]);
  }, 60_000);

  afterAll(async () => {
    await ctx?.server.handle.close();
    await proxy?.close();
    await ctx?.sql.close();
    await ctx?.db.drop();
  });

  const requests: ReadonlyArray<{
    readonly name: string;
    readonly send: (c: PolicyContext) => Promise<Reply>;
    readonly status: number;
  }> = [
    { name: 'GET a page', send: (c) => c.http.get('/notes?order=id', c.alice.auth), status: 200 },
    { name: 'GET one row by key', send: (c) => c.http.get('/notes/1', c.alice.auth), status: 200 },
    { name: 'POST one row', send: (c) => c.http.post('/notes', { body: 'two' }, c.alice.auth), status: 201 },
    {
      name: 'POST three rows setting different columns',
      send: (c) =>
        c.http.post('/notes', [{ body: 'three' }, { user_id: c.alice.id, body: 'four' }, {}], c.alice.auth),
      status: 201,
    },
    {
      name: 'PATCH one row by key',
      send: (c) => c.http.patch('/notes/1', { body: 'uno' }, c.alice.auth),
      status: 200,
    },
    {
      name: 'PATCH the rows a filter selects',
      send: (c) => c.http.patch('/notes?body=eq.three', { body: 'tres' }, c.alice.auth),
      status: 200,
    },
    { name: 'DELETE one row by key', send: (c) => c.http.delete('/notes/1', c.alice.auth), status: 200 },
    {
      name: 'POST two rows, the second refused by the check',
      send: (c) => c.http.post('/notes', [{ body: 'five' }, { body: 'forbidden' }], c.alice.auth),
      status: 403,
    },
  ];

  it.each(requests)('$name: one round trip', async ({ send, status }) => {
    const c = suite();
    // The first request of its kind may warm the pool and (native) bring the table's policies up
    // to date; the same request again must be one flight, and so must the one after it.
    await send(c);
    await resetRows(
      c,
      'notes',
      ['id', 'user_id', 'body'],
      [
        [1, c.alice.id, 'one'],
        [2, c.alice.id, 'three'],
      ],
    );
    const { reply, flights } = await counted(() => send(c));
    expect(reply.status, reply.text).toBe(status);
    expect(flights).toBe(1);
  });

  it('a several-row create answers its rows in order, defaults filled, owner set', async () => {
    const c = suite();
    await resetRows(c, 'notes', ['id', 'user_id', 'body'], []);
    const { reply, flights } = await counted(() =>
      c.http.post('/notes', [{ body: 'a' }, {}, { body: 'c', user_id: c.alice.id }], c.alice.auth),
    );
    expect(reply.status, reply.text).toBe(201);
    expect(flights).toBe(1);
    const rows = reply.json as Array<{ id: number; user_id: number; body: string }>;
    expect(rows.map((r) => [r.user_id, r.body])).toEqual([
      [c.alice.id, 'a'],
      [c.alice.id, 'default'],
      [c.alice.id, 'c'],
    ]);
    expect(rows.map((r) => r.id)).toEqual([...rows.map((r) => r.id)].sort((a, b) => a - b));
    expect(await tableRows(c, 'notes', ['id', 'user_id', 'body'])).toEqual(
      rows.map((r) => ({ id: r.id, user_id: r.user_id, body: r.body })),
    );
  });

  it('a refused row in a several-row create leaves nothing written, and says so', async () => {
    const c = suite();
    await resetRows(c, 'notes', ['id', 'user_id', 'body'], []);
    const reply = await c.http.post(
      '/notes',
      [{ body: 'x' }, { body: 'forbidden' }, { body: 'y' }],
      c.alice.auth,
    );
    expect(reply.status, reply.text).toBe(403);
    expect((reply.json as { error: { code: string } }).error.code).toBe('policy_check_failed');
    // One statement wrote the three rows: which one failed is not known, so none is named.
    expect((reply.json as { error: { details?: unknown } }).error.details).toBeUndefined();
    expect(await tableRows(c, 'notes', ['id'])).toEqual([]);
  });
});
