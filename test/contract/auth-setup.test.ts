// Auth setup on every database: exactly the tables and rows of docs/authentication.md, once, also under a race.

import bcrypt from 'bcrypt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DialectName } from '../../compiler/types.js';
import { createAdapter } from '../../runtime/db/create-adapter.js';
import type { DbAdapter, Row } from '../../runtime/db/adapter.js';
import { DEFAULT_POLICIES, createAuthTables, setupAuth } from '../../runtime/auth/setup.js';
import { ALL_KINDS, createTestDatabase, isAvailable, skipReason } from '../support/databases.js';
import { serverDescribe } from '../support/server-only.js';
import type { TestDatabase } from '../support/databases.js';

const selectAll = async (adapter: DbAdapter, table: string): Promise<readonly Row[]> =>
  (
    await adapter.query({
      text: `SELECT * FROM ${adapter.dialect.quoteIdent(table)} ORDER BY id`,
      values: [],
    })
  ).rows;

async function snapshot(adapter: DbAdapter): Promise<unknown> {
  return {
    users: await selectAll(adapter, 'auth_users'),
    policies: await selectAll(adapter, 'auth_policies'),
  };
}

async function settled<T>(promises: readonly Promise<T>[]): Promise<{ fulfilled: T[]; rejected: unknown[] }> {
  const fulfilled: T[] = [];
  const rejected: unknown[] = [];
  for (const r of await Promise.allSettled(promises)) {
    if (r.status === 'fulfilled') fulfilled.push(r.value);
    else rejected.push(r.reason);
  }
  return { fulfilled, rejected };
}

describe.each(ALL_KINDS)('auth setup on %s', (kind: DialectName) => {
  const skip = !isAvailable(kind);

  describe.skipIf(skip)(skip ? (skipReason(kind) ?? '') : 'one database, set up once', () => {
    let db: TestDatabase;
    let adapter: DbAdapter;

    beforeAll(async () => {
      db = await createTestDatabase(kind);
      adapter = await createAdapter(db.url);
    });
    afterAll(async () => {
      await adapter?.close();
      await db?.drop();
    });

    it('creates exactly auth_users and auth_policies with the columns of docs/authentication.md (+ the hidden username_key) and the login throttle', async () => {
      const result = await setupAuth(adapter, { dbUrl: db.url });
      expect(result.username).toBe('admin');
      expect(result.password.length).toBeGreaterThanOrEqual(20);

      const schema = await adapter.introspect();
      const authTables = [
        'auth_login_throttle',
        'auth_policies',
        'auth_refresh_tokens',
        'auth_sessions',
        'auth_users',
      ];
      expect([...schema.tables.keys()].filter((t) => !t.startsWith('sqlite_')).sort()).toEqual(authTables);
      // postgres-migrations' record is the server's own: not served.
      expect([...(schema.unserved?.keys() ?? [])]).toEqual(kind === 'postgres' ? ['migrations'] : []);
      const users = schema.tables.get('auth_users');
      const policies = schema.tables.get('auth_policies');
      expect(users?.columns.map((c) => c.name)).toEqual([
        'id',
        'username',
        'password',
        'is_admin',
        'username_key',
      ]);
      expect(users?.primaryKey).toEqual(['id']);
      expect(users?.columnsByName.get('id')).toMatchObject({ type: 'integer', autoIncrement: true });
      expect(users?.columnsByName.get('is_admin')).toMatchObject({
        type: 'boolean',
        nullable: false,
        hasDefault: true,
      });
      expect(policies?.columns.map((c) => c.name)).toEqual([
        'id',
        'description',
        'table_name',
        'action',
        'expression',
        'columns',
      ]);
      expect(policies?.columnsByName.get('columns')?.nullable).toBe(true);
      expect(policies?.primaryKey).toEqual(['id']);
      for (const column of ['username', 'password', 'is_admin', 'username_key']) {
        expect(users?.columnsByName.get(column)?.nullable).toBe(false);
      }
      const throttle = schema.tables.get('auth_login_throttle');
      expect(throttle?.columns.map((c) => c.name)).toEqual([
        'throttle_key',
        'username_key',
        'window_start',
        'failures',
        'pending',
        'pending_since',
      ]);
      expect(throttle?.primaryKey).toEqual(['throttle_key']);
    });

    it('inserts the three default policies and one admin whose password is a bcrypt hash (cost ≥ 10) of the one shown', async () => {
      const policies = await selectAll(adapter, 'auth_policies');
      expect(
        policies.map(({ table_name, action, expression, description }) => ({
          table_name,
          action,
          expression,
          description,
        })),
      ).toEqual(DEFAULT_POLICIES);
      const users = await selectAll(adapter, 'auth_users');
      expect(users).toHaveLength(1);
      expect(users[0]).toMatchObject({ username: 'admin', is_admin: true, username_key: expect.anything() });
      const hash = String(users[0]?.['password']);
      expect(hash).toMatch(/^\$2b\$\d\d\$/);
      expect(bcrypt.getRounds(hash)).toBeGreaterThanOrEqual(10);
    });

    it('answers 409 already_setup the second time and changes nothing', async () => {
      const before = await snapshot(adapter);
      await expect(setupAuth(adapter, { dbUrl: db.url })).rejects.toMatchObject({
        category: 'conflict',
        code: 'already_setup',
        message: 'auth is already set up',
      });
      expect(await snapshot(adapter)).toEqual(before);
    });
  });

  serverDescribe(kind)('ten simultaneous setups on ten connections', () => {
    let db: TestDatabase;
    let adapters: DbAdapter[] = [];

    beforeAll(async () => {
      db = await createTestDatabase(kind);
      adapters = await Promise.all(Array.from({ length: 10 }, () => createAdapter(db.url, { poolSize: 2 })));
    });
    afterAll(async () => {
      await Promise.all(adapters.map((a) => a.close()));
      await db?.drop();
    });

    it('gives one success, nine already_setup, one admin and three policies', async () => {
      const { fulfilled, rejected } = await settled(adapters.map((a) => setupAuth(a, { dbUrl: db.url })));
      expect(rejected.map((e) => (e as { code?: unknown }).code)).toEqual(Array(9).fill('already_setup'));
      expect(fulfilled).toHaveLength(1);
      const [adapter] = adapters;
      if (adapter === undefined) throw new Error('no adapter');
      const users = await selectAll(adapter, 'auth_users');
      expect(users.map((u) => [u['username'], u['is_admin']])).toEqual([['admin', true]]);
      expect(await bcrypt.compare(fulfilled[0]?.password ?? '', String(users[0]?.['password']))).toBe(true);
      expect(await selectAll(adapter, 'auth_policies')).toHaveLength(3);
    });
  });

  describe.skipIf(skip)(skip ? (skipReason(kind) ?? '') : 'tables created before setup', () => {
    let db: TestDatabase;
    let adapter: DbAdapter;

    beforeAll(async () => {
      db = await createTestDatabase(kind);
      adapter = await createAdapter(db.url);
    });
    afterAll(async () => {
      await adapter?.close();
      await db?.drop();
    });

    it('creating the tables is idempotent, and setup still runs on empty tables', async () => {
      await createAuthTables(adapter, { dbUrl: db.url });
      await createAuthTables(adapter, { dbUrl: db.url });
      expect(await snapshot(adapter)).toEqual({ users: [], policies: [] });
      await setupAuth(adapter, { dbUrl: db.url });
      expect(await selectAll(adapter, 'auth_users')).toHaveLength(1);
    });

    it('refuses a database URL of another kind than the adapter', async () => {
      const otherUrl = kind === 'sqlite' ? 'postgres://127.0.0.1/elsewhere' : 'sqlite://:memory:';
      await expect(setupAuth(adapter, { dbUrl: otherUrl })).rejects.toMatchObject({
        code: 'db_url_mismatch',
      });
    });

    it('does not set up again once the admin is gone but policies remain', async () => {
      await adapter.exec('DELETE FROM auth_users');
      const before = await snapshot(adapter);
      await expect(setupAuth(adapter, { dbUrl: db.url })).rejects.toMatchObject({ code: 'already_setup' });
      expect(await snapshot(adapter)).toEqual(before);
    });
  });
});
