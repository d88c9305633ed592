import { describe, expect, it } from 'vitest';
import { ANONYMOUS } from '../../../../compiler/types.js';
import type { DbSession, SchemaSnapshot, TableInfo } from '../../../../runtime/db/adapter.js';
import type { RequestRunner, RunContext } from '../../../../runtime/enforce/request-runner.js';
import { publicAuthorizer, type WriteGuard } from '../../../../runtime/enforce/authorizer.js';
import { composeGuards } from '../../../../runtime/enforce/write-guards.js';
import {
  policyInvalidatingRunner,
  withAuthTableGuards,
} from '../../../../runtime/policies/auth-table-guards.js';
import { createPasswordHasher } from '../../../../runtime/auth/passwords.js';

const session: DbSession = { query: () => Promise.reject(new Error('no queries here')) };
const table = (name: string): TableInfo => ({
  name,
  columns: [],
  columnsByName: new Map(),
  primaryKey: ['id'],
});

/** No other table: these policies have no subqueries. */
const NO_SCHEMA: SchemaSnapshot = { tables: new Map() };

describe('composeGuards', () => {
  it('runs the first guard, then the second, on every hook', async () => {
    const calls: string[] = [];
    const first: WriteGuard = {
      prepareCreate: async (rows) => (calls.push('first create'), rows.map((r) => ({ ...r, a: 1 }))),
      checkStoredRows: async () => void calls.push('first check'),
    };
    const second: WriteGuard = {
      prepareCreate: async (rows) => (calls.push('second create'), rows.map((r) => ({ ...r, b: r['a'] }))),
      preparePatch: async (patch) => (calls.push('second patch'), { ...patch, c: 3 }),
      checkStoredRows: async () => void calls.push('second check'),
    };
    const both = composeGuards(first, second);
    expect(await both.prepareCreate?.([{}], session)).toEqual([{ a: 1, b: 1 }]);
    expect(await both.preparePatch?.({}, session)).toEqual({ c: 3 });
    await both.checkStoredRows?.([], session);
    expect(calls).toEqual(['first create', 'second create', 'second patch', 'first check', 'second check']);
  });
});

describe('withAuthTableGuards', () => {
  const authorizer = withAuthTableGuards(publicAuthorizer, {
    schema: async () => ({ tables: new Map() }),
    hasher: createPasswordHasher(),
    usersFloor: false,
  });

  it('hashes a password and derives the username key on auth_users writes', async () => {
    const a = await authorizer.authorize({
      schema: NO_SCHEMA,
      table: table('auth_users'),
      action: 'create',
      user: ANONYMOUS,
    });
    if (a.kind === 'deny') throw new Error('denied');
    const [row] =
      (await a.guard?.prepareCreate?.([{ username: 'Élise', password: 'password123' }], session)) ?? [];
    expect(row).toMatchObject({ username: 'Élise', username_key: 'élise', is_admin: false });
    expect(String(row?.['password'])).toMatch(/^\$2b\$10\$/);
    const update = await authorizer.authorize({
      schema: NO_SCHEMA,
      table: table('auth_users'),
      action: 'update',
      user: ANONYMOUS,
    });
    if (update.kind === 'deny') throw new Error('denied');
    expect(await update.guard?.preparePatch?.({ username: 'BOB' }, session)).toEqual({
      username: 'BOB',
      username_key: 'bob',
    });
  });

  it('refuses the hidden key and leaves other tables and reads alone', async () => {
    const update = await authorizer.authorize({
      schema: NO_SCHEMA,
      table: table('auth_users'),
      action: 'update',
      user: ANONYMOUS,
    });
    if (update.kind === 'deny') throw new Error('denied');
    await expect(update.guard?.preparePatch?.({ username_key: 'x' }, session)).rejects.toMatchObject({
      code: 'unknown_column',
    });
    expect(
      await authorizer.authorize({
        schema: NO_SCHEMA,
        table: table('notes'),
        action: 'create',
        user: ANONYMOUS,
      }),
    ).toEqual({
      kind: 'allow',
    });
    expect(
      await authorizer.authorize({
        schema: NO_SCHEMA,
        table: table('auth_users'),
        action: 'read',
        user: ANONYMOUS,
      }),
    ).toEqual({ kind: 'allow' });
  });
});

describe('policyInvalidatingRunner', () => {
  const inner: RequestRunner = { run: async (_c, _m, fn) => fn(session) };
  const context = (table: string, action: RunContext['action']): RunContext => ({
    user: ANONYMOUS,
    table,
    action,
  });

  it('signals after writes to auth_policies, committed or not, and never for reads or other tables', async () => {
    let signals = 0;
    const runner = policyInvalidatingRunner(inner, () => void (signals += 1));
    await runner.run(context('auth_policies', 'create'), 'transaction', async () => 1);
    await runner.run(context('auth_policies', 'delete'), 'single', async () => 1);
    await expect(
      runner.run(context('auth_policies', 'update'), 'transaction', () =>
        Promise.reject(new Error('rolled back')),
      ),
    ).rejects.toThrow();
    await runner.run(context('auth_policies', 'read'), 'single', async () => 1);
    await runner.run(context('notes', 'create'), 'transaction', async () => 1);
    expect(signals).toBe(3);
  });
});

describe('the floor on auth_users', () => {
  const floored = withAuthTableGuards(publicAuthorizer, {
    schema: async () => ({ tables: new Map() }),
    hasher: createPasswordHasher(),
  });
  const alice = { ...ANONYMOUS, id: 7, username: 'alice', is_authenticated: true };

  it.each(['id', 'password', 'is_admin'])(
    'refuses a non-admin writing %s, before hashing anything',
    async (column) => {
      const a = await floored.authorize({
        schema: NO_SCHEMA,
        table: table('auth_users'),
        action: 'update',
        user: alice,
      });
      if (a.kind === 'deny') throw new Error('denied');
      await expect(a.guard?.preparePatch?.({ [column]: 'x' }, session)).rejects.toMatchObject({
        status: 403,
        code: 'protected_column',
        details: { table: 'auth_users', column },
      });
    },
  );

  it('lets an admin write them', async () => {
    const admin = { ...alice, is_admin: true };
    const a = await floored.authorize({
      schema: NO_SCHEMA,
      table: table('auth_users'),
      action: 'update',
      user: admin,
    });
    if (a.kind === 'deny') throw new Error('denied');
    await expect(a.guard?.preparePatch?.({ is_admin: true }, session)).resolves.toEqual({ is_admin: true });
  });
});
