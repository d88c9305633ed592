// The policy seam through real HTTP: an Authorizer that denies, filters with a predicate bound to
// the user, and guards writes inside the transaction; a RequestRunner that sees every request.

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SqlBuilder } from '../../../compiler/sql/fragment.js';
import { ANONYMOUS, type AuthUser } from '../../../compiler/types.js';
import { RestError } from '../../../errors/rest-error.js';
import type { DbAdapter } from '../../../runtime/db/adapter.js';
import { createAdapter } from '../../../runtime/db/create-adapter.js';
import { adapterRunner, type RequestRunner, type RunMode } from '../../../runtime/enforce/request-runner.js';
import type { Authorizer } from '../../../runtime/enforce/authorizer.js';
import { createSchemaCache } from '../../../runtime/db/schema-cache.js';
import {
  ALL_KINDS,
  createTestDatabase,
  isAvailable,
  skipReason,
  type TestDatabase,
} from '../../support/databases.js';
import { client, type Client } from '../../support/http.js';
import { captureLog, openRawSql, startAppServer, testConfig, type RawSql } from '../../support/server.js';
import { FIXTURE_DDL } from './fixtures.js';
import { expectError, ids, seedItems } from './matrix.js';

function testAuthorizer(adapter: DbAdapter): Authorizer {
  const d = adapter.dialect;
  const qtyAbove = (n: number) => new SqlBuilder(d).appendIdent('qty').append(' > ').appendValue(n).build();
  const forbidden = (message: string) => new RestError('forbidden', message);
  return {
    authorize: ({ table, action, user }) => {
      if (table.name === 'logs') throw new Error('internal detail: SELECT secret FROM vault');
      if (table.name !== 'items') return { kind: 'allow' };
      switch (action) {
        case 'read':
          return { kind: 'filter', predicate: qtyAbove(1) };
        case 'read_mine':
          return {
            kind: 'filter',
            predicate: new SqlBuilder(d)
              .appendIdent('note')
              .append(' = ')
              .appendAuth({ kind: 'username' }, 'text')
              .build(),
          };
        case 'delete':
          return { kind: 'deny' };
        case 'create':
          return {
            kind: 'allow',
            guard: {
              prepareCreate: async (rows) => {
                if (rows.some((r) => r['title'] === 'forbidden'))
                  throw forbidden('that title is not allowed');
                return rows.map((r) => ({ note: `by ${user.username ?? 'anonymous'}`, ...r }));
              },
            },
          };
        case 'update':
          return {
            kind: 'filter',
            predicate: qtyAbove(1),
            guard: {
              preparePatch: async (patch) =>
                typeof patch['note'] === 'string' ? { ...patch, note: `${patch['note']}!` } : patch,
              checkStoredRows: async (rows) => {
                if (rows.some((r) => typeof r['qty'] === 'number' && r['qty'] > 100))
                  throw forbidden('qty must stay at most 100');
              },
            },
          };
      }
    },
  };
}

const userFrom = (header: string | string[] | undefined): AuthUser =>
  typeof header === 'string' ? { ...ANONYMOUS, id: 1, username: header, is_authenticated: true } : ANONYMOUS;

for (const kind of ALL_KINDS) {
  const reason = skipReason(kind);
  describe.skipIf(!isAvailable(kind))(
    `Authorizer and RequestRunner seams [${kind}]${reason === undefined ? '' : ` — ${reason}`}`,
    () => {
      let db: TestDatabase;
      let sql: RawSql;
      let adapter: DbAdapter;
      let server: { url: string; close(): Promise<void> };
      let http: Client;
      const log = captureLog();
      const runs: Array<{ action: string; table: string; mode: RunMode; user: string | null }> = [];

      beforeAll(async () => {
        db = await createTestDatabase(kind);
        sql = await openRawSql(db);
        for (const ddl of FIXTURE_DDL[kind]) await sql.exec(ddl);
        adapter = await createAdapter(db.url);
        const inner = adapterRunner(adapter);
        const runner: RequestRunner = {
          run: (context, mode, fn) => {
            runs.push({ action: context.action, table: context.table, mode, user: context.user.username });
            return inner.run(context, mode, fn);
          },
        };
        server = await startAppServer({
          logger: log.logger,
          adapter,
          schema: createSchemaCache(adapter),
          config: testConfig(db.url),
          authenticate: (req) => userFrom(req.headers['x-user']),
          authorizer: testAuthorizer(adapter),
          runner,
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
        runs.length = 0;
        await seedItems({ kind, sql });
      });

      const as = (user: string) => ({ headers: { 'x-user': user } });

      it('ANDs the read predicate into lists, counts and single rows', async () => {
        expect(ids(await http.get('/items'))).toEqual([1, 2]);
        expect(ids(await http.get('/items?qty=lt.10'))).toEqual([1]);
        expect((await http.get('/items?count')).json).toEqual({ count: 2 });
        expect((await http.get('/items/2')).status).toBe(200);
        expectError(await http.get('/items/4'), 404, 'not_found');
        expect(runs.map((r) => [r.action, r.mode])).toContainEqual(['read', 'single']);
      });

      it('binds auth_user values of the predicate per request under read_mine', async () => {
        expect(ids(await http.get('/items?mine', as('Fresh')))).toEqual([1]);
        expect(ids(await http.get('/items?mine', as('dried')))).toEqual([4]);
        expect(ids(await http.get('/items?mine'))).toEqual([]);
        expect(runs.map((r) => [r.action, r.user])).toEqual([
          ['read_mine', 'Fresh'],
          ['read_mine', 'dried'],
          ['read_mine', null],
        ]);
      });

      it('answers a denial with 401 and WWW-Authenticate for anonymous users and 403 for logged-in ones', async () => {
        const anonymous = await http.delete('/items/1');
        expectError(anonymous, 401, 'unauthenticated');
        expect(anonymous.headers.get('www-authenticate')).toBe('Bearer');
        expectError(await http.delete('/items/1', as('bob')), 403, 'forbidden');
        expect(await sql.count('items')).toBe(5);
        expect(runs).toEqual([]);
      });

      it('prepares created rows before they are written and writes nothing when a guard refuses', async () => {
        const created = await http.post(
          '/items?select=title,note',
          [{ title: 'n1' }, { title: 'n2', note: 'mine' }],
          as('bob'),
        );
        expect(created.json).toEqual([
          { title: 'n1', note: 'by bob' },
          { title: 'n2', note: 'mine' },
        ]);
        expectError(await http.post('/items', [{ title: 'n3' }, { title: 'forbidden' }]), 403, 'forbidden');
        expect(await sql.count('items')).toBe(7);
        // Several rows are one INSERT … RETURNING where the database can (PostgreSQL), else one transaction.
        const several = adapter.returning.insert && adapter.dialect.manyRowInsert ? 'single' : 'transaction';
        expect(runs.map((r) => [r.action, r.mode])).toEqual([
          ['create', several],
          ['create', several],
        ]);
      });

      it('updates only visible rows, checks the rows as they will be, and rewrites the patch', async () => {
        expectError(await http.patch('/items/4', { note: 'x' }), 404, 'not_found');
        expectError(await http.patch('/items/2', { qty: 500 }), 403, 'forbidden');
        expectError(await http.patch('/items?qty=gt.0', { qty: 101 }), 403, 'forbidden');
        expect(await sql.rows('SELECT id, qty FROM items WHERE id IN (1, 2) ORDER BY id')).toEqual([
          { id: 1, qty: 5 },
          { id: 2, qty: 12 },
        ]);
        expect((await http.patch('/items?qty=gte.0', { note: 'seen' })).json).toEqual({ updated: 2 });
        expect(await sql.rows("SELECT id FROM items WHERE note = 'seen!' ORDER BY id")).toEqual([
          { id: 1 },
          { id: 2 },
        ]);
        expect((await http.patch('/items/2', { qty: 100 })).json).toEqual({ updated: 1 });
        expect(runs.every((r) => r.action === 'update' && r.mode === 'transaction')).toBe(true);
      });

      it('answers an unexpected error with a bare 500 and its request id, the detail only in the log', async () => {
        const r = await http.get('/logs', { headers: { 'x-request-id': 'req-500' } });
        expect([r.status, r.json]).toEqual([
          500,
          {
            error: {
              code: 'internal',
              message: 'internal error (request id req-500)',
              details: { request_id: 'req-500' },
            },
          },
        ]);
        expect(r.text).not.toContain('vault');
        const logged = log.lines.find((l) => l['requestId'] === 'req-500');
        expect(logged?.['level']).toBe(50);
        expect(JSON.stringify(logged?.['err'])).toContain('SELECT secret FROM vault');
      });

      it('leaves other tables to the authorizer default (allowed)', async () => {
        expect((await http.post('/tags', { name: 't', weight: 1 })).status).toBe(201);
        expect(
          (
            await http.post('/tags', [
              { name: 'u', weight: 2 },
              { name: 'v', weight: 3 },
            ])
          ).status,
        ).toBe(201);
        expect((await http.delete('/tags?name=in.(t,u,v)')).json).toEqual({ deleted: 3 });
        // One row is one INSERT … RETURNING of its own (where the database returns what it stored);
        // several rows too where one INSERT can store them all (PostgreSQL), else one transaction.
        expect(runs.map((r) => [r.action, r.mode])).toEqual([
          ['create', adapter.returning.insert ? 'single' : 'transaction'],
          ['create', adapter.returning.insert && adapter.dialect.manyRowInsert ? 'single' : 'transaction'],
          ['delete', 'single'],
        ]);
      });
    },
  );
}
