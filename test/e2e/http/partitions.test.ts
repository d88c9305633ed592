// Partitions and inheritance children through real HTTP on PostgreSQL, with native RLS and without:
// a child is reached only through its parent (addressing it is 404 `unknown_table`, naming it in a
// policy 400 `invalid_policy`), reads of the parent include its children's rows, and the parent's
// policy decides every row — reads, creates routed to a partition, updates and deletes.

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Reply } from '../../support/http.js';
import {
  expectStatus,
  idsOf,
  resetRows,
  setPolicies,
  startAuthSuite,
  tableRows,
  type PolicyContext,
} from './policy-support.js';

const DDL = [
  'CREATE TABLE ev (id integer PRIMARY KEY, user_id integer, hidden boolean NOT NULL DEFAULT false, body varchar(40)) PARTITION BY RANGE (id)',
  'CREATE TABLE ev_a PARTITION OF ev FOR VALUES FROM (1) TO (100)',
  'CREATE TABLE ev_b PARTITION OF ev FOR VALUES FROM (100) TO (200)',
  'CREATE TABLE base_t (id serial PRIMARY KEY, user_id integer, hidden boolean NOT NULL DEFAULT false)',
  'CREATE TABLE child_t (extra varchar(40)) INHERITS (base_t)',
];

const HIDDEN_RULE = 'user_id = auth_user.id and not hidden';

const errorOf = (reply: Reply): { code?: string; message?: string } =>
  (reply.json as { error: { code?: string; message?: string } }).error;

for (const rls of [false, true]) {
  describe(`partitions and inheritance children [postgres rls=${rls ? 'on' : 'off'}]`, () => {
    let ctx: PolicyContext | undefined;
    const c = (): PolicyContext => {
      if (ctx === undefined) throw new Error('the suite did not start');
      return ctx;
    };
    beforeAll(async () => {
      // The schema is re-checked every 200 ms instead of the server's 1 s: a child that stops or
      // starts inheriting is seen sooner (each of the two transitions waited up to a second).
      ctx = await startAuthSuite('postgres', {
        rls,
        ddl: { postgres: DDL, mysql: [], sqlite: [] },
        schemaCheckIntervalMs: 200,
      });
    });
    afterAll(async () => {
      await ctx?.server.handle.close();
      await ctx?.sql.close();
      await ctx?.db.drop();
    });

    beforeEach(async () => {
      const { alice, bob } = c();
      await setPolicies(c(), [
        { table_name: 'ev', action: 'all', expression: HIDDEN_RULE },
        { table_name: 'base_t', action: 'all', expression: HIDDEN_RULE },
      ]);
      await c().sql.exec('DELETE FROM ev');
      await c().sql.exec(
        `INSERT INTO ev (id, user_id, hidden, body) VALUES (1, ${alice.id}, false, 'a'), (2, ${alice.id}, true, 'hidden'), (150, ${alice.id}, false, 'b'), (151, ${bob.id}, false, 'bob')`,
      );
      await resetRows(c(), 'base_t', ['id', 'user_id', 'hidden'], [[1, alice.id, false]]);
      await c().sql.exec('DELETE FROM child_t');
      await c().sql.exec(
        `INSERT INTO child_t (id, user_id, hidden, extra) VALUES (2, ${alice.id}, false, 'x'), (3, ${alice.id}, true, 'hidden'), (4, ${bob.id}, false, 'bob')`,
      );
    });

    it('a partition or an inheritance child is not served: 404 unknown_table, for the admin too', async () => {
      const { http, alice, admin } = c();
      for (const table of ['ev_a', 'ev_b', 'child_t']) {
        expectStatus(await http.get(`/${table}`, alice.auth), 404, 'unknown_table');
        expectStatus(await http.get(`/${table}/2`, admin.auth), 404, 'unknown_table');
        expectStatus(await http.get(`/${table}?count`, admin.auth), 404, 'unknown_table');
        expectStatus(
          await http.post(`/${table}`, { id: 5, user_id: alice.id, hidden: true }, alice.auth),
          404,
          'unknown_table',
        );
        expectStatus(
          await http.patch(`/${table}?id=gt.0`, { hidden: false }, alice.auth),
          404,
          'unknown_table',
        );
        expectStatus(await http.delete(`/${table}?id=gt.0`, admin.auth), 404, 'unknown_table');
      }
      // Nothing was written through them.
      expect((await tableRows(c(), 'ev', ['id', 'hidden'])).map((r) => r['id'])).toEqual([1, 2, 150, 151]);
      expect((await tableRows(c(), 'child_t', ['id'])).map((r) => r['id'])).toEqual([2, 3, 4]);
    });

    it.runIf(rls)('native RLS: the parents carry the generated policies, the children none', async () => {
      const rows = await c().sql.rows(
        "SELECT c.relname AS t, count(p.polname) AS n FROM pg_class c LEFT JOIN pg_policy p ON p.polrelid = c.oid WHERE c.relname IN ('ev', 'ev_a', 'ev_b', 'base_t', 'child_t') GROUP BY c.relname ORDER BY c.relname",
      );
      const counts = Object.fromEntries(rows.map((r) => [String(r['t']), Number(r['n'])]));
      expect(counts['ev']).toBeGreaterThan(0);
      expect(counts['base_t']).toBeGreaterThan(0);
      expect([counts['ev_a'], counts['ev_b'], counts['child_t']]).toEqual([0, 0, 0]);
      // A generated policy left on a child (by a version that served it) is dropped by the next
      // reconcile, here the one a policy change starts.
      await c().sql.exec('CREATE POLICY rest_left_over ON child_t USING (true)');
      await c().sql.exec(
        "COMMENT ON POLICY rest_left_over ON child_t IS 'rest generated 0000: compiled from auth_policies by rest'",
      );
      await setPolicies(c(), [{ table_name: 'ev', action: 'all', expression: HIDDEN_RULE }]);
      const left = async (): Promise<number> =>
        (await c().sql.rows("SELECT polname FROM pg_policy WHERE polname = 'rest_left_over'")).length;
      for (let i = 0; i < 50 && (await left()) > 0; i += 1) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(await left()).toBe(0);
    });

    it("reads of the parent include the children's rows, under the parent's policy", async () => {
      const { http, alice, bob, admin } = c();
      expect(idsOf(await http.get('/ev', alice.auth))).toEqual([1, 150]);
      expect(idsOf(await http.get('/ev', bob.auth))).toEqual([151]);
      expect((await http.get('/ev?count', alice.auth)).json).toEqual({ count: 2 });
      expectStatus(await http.get('/ev/2', alice.auth), 404, 'not_found');
      expect(idsOf(await http.get('/base_t', alice.auth))).toEqual([1, 2]);
      expect(idsOf(await http.get('/base_t?hidden=is.false', bob.auth))).toEqual([4]);
      expectStatus(await http.get('/base_t/3', alice.auth), 404, 'not_found');
      // The admin's policy is the same rule: their own rows only (none).
      expect(idsOf(await http.get('/ev', admin.auth))).toEqual([]);
      expectStatus(await http.get('/ev'), 401);
    });

    it("writes through the parent are judged by the parent's policy, partitions included", async () => {
      const { http, alice } = c();
      // Routed to ev_b; a hidden row is refused wherever it would land.
      const created = await http.post('/ev', { id: 120, user_id: alice.id, body: 'new' }, alice.auth);
      expect(created.status, created.text).toBe(201);
      expectStatus(
        await http.post('/ev', { id: 3, user_id: alice.id, hidden: true }, alice.auth),
        403,
        'policy_check_failed',
      );
      expectStatus(
        await http.post('/ev', { id: 130, user_id: alice.id, hidden: true }, alice.auth),
        403,
        'policy_check_failed',
      );
      expectStatus(await http.patch('/ev/2', { body: 'seen' }, alice.auth), 404, 'not_found');
      expectStatus(await http.patch('/ev?id=gt.0', { hidden: true }, alice.auth), 403, 'policy_check_failed');
      expect((await http.patch('/ev?id=gte.100', { body: 'edited' }, alice.auth)).json).toEqual({
        updated: 2,
      });
      expect((await http.delete('/ev?id=gt.0', alice.auth)).json).toEqual({ deleted: 3 });
      expect(await tableRows(c(), 'ev', ['id', 'hidden', 'body'])).toEqual([
        { id: 2, hidden: true, body: 'hidden' },
        { id: 151, hidden: false, body: 'bob' },
      ]);
      // An inheritance child's rows are updated and deleted through the parent, under its policy.
      expect((await http.patch('/base_t?id=gt.0', { user_id: alice.id }, alice.auth)).json).toEqual({
        updated: 2,
      });
      expectStatus(await http.delete('/base_t/3', alice.auth), 404, 'not_found');
      expect((await http.delete('/base_t/2', alice.auth)).json).toEqual({ deleted: 1 });
      expect((await tableRows(c(), 'child_t', ['id'])).map((r) => r['id'])).toEqual([3, 4]);
    });

    it('a policy naming a partition or an inheritance child is refused (400 invalid_policy), nothing written', async () => {
      const { http, admin } = c();
      const before = (await c().sql.rows('SELECT id FROM auth_policies')).length;
      const add = (table_name: string, expression: string): Promise<Reply> =>
        http.post('/auth_policies', { table_name, action: 'read', expression, description: 'x' }, admin.auth);
      const onPartition = await add('ev_a', '');
      expectStatus(onPartition, 400, 'invalid_policy');
      expect(errorOf(onPartition).message).toBe(
        "table 'ev_a' is a partition of 'ev': it is reached only through 'ev': a policy cannot name it",
      );
      const onChild = await add('child_t', 'user_id = auth_user.id');
      expectStatus(onChild, 400, 'invalid_policy');
      expect(errorOf(onChild).message).toBe(
        "table 'child_t' is an inheritance child of 'base_t': it is reached only through 'base_t': a policy cannot name it",
      );
      const inSubquery = await add('ev', 'exists (select from child_t where child_t.user_id = ev.user_id)');
      expectStatus(inSubquery, 400, 'invalid_policy');
      expect(errorOf(inSubquery).message).toBe(
        "table 'child_t' is an inheritance child of 'base_t': it is reached only through 'base_t': a policy cannot read it at 1:21",
      );
      const inIn = await add('base_t', 'id in (select id from ev_b where user_id = auth_user.id)');
      expectStatus(inIn, 400, 'invalid_policy');
      expect((await c().sql.rows('SELECT id FROM auth_policies')).length).toBe(before);
    });

    it('a table that stops inheriting is served on its own, and hidden again once it inherits', async () => {
      const { http, alice } = c();
      const untilStatus = async (path: string, status: number): Promise<Reply> => {
        let reply = await http.get(path, alice.auth);
        for (let i = 0; i < 100 && reply.status !== status; i += 1) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          reply = await http.get(path, alice.auth);
        }
        return reply;
      };
      await c().sql.exec('ALTER TABLE child_t NO INHERIT base_t');
      // On its own it is served under its own policy (here the default `user_id = auth_user.id`).
      expect(idsOf(await untilStatus('/child_t', 200))).toEqual([2, 3]);
      expect(idsOf(await http.get('/base_t', alice.auth))).toEqual([1]);
      await c().sql.exec('ALTER TABLE child_t INHERIT base_t');
      expectStatus(await untilStatus('/child_t', 404), 404, 'unknown_table');
      expect(idsOf(await http.get('/base_t', alice.auth))).toEqual([1, 2]);
    });

    it("postgres-migrations' record is not served and cannot be named in a policy", async () => {
      const { http, admin } = c();
      expectStatus(await http.get('/migrations', admin.auth), 404, 'unknown_table');
      const reply = await http.post(
        '/auth_policies',
        {
          table_name: 'ev',
          action: 'read',
          expression: 'exists (select from migrations where id = 1)',
          description: 'x',
        },
        admin.auth,
      );
      expectStatus(reply, 400, 'invalid_policy');
      expect(errorOf(reply).message).toMatch(/^table 'migrations' is the record of rest's own migrations/);
    });
  });
}
