import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { compilePolicySet } from '../../../../compiler/policy-set.js';
import { sqliteDialect } from '../../../../compiler/sql/sqlite-dialect.js';
import { ANONYMOUS, type AuthUser, type PolicyRow } from '../../../../compiler/types.js';
import { callerView, viewKey } from '../../../../runtime/openapi/caller-view.js';
import { openApiDocument } from '../../../../runtime/openapi/openapi-document.js';
import { fakeColumn, fakeSchema, fakeTable } from '../../../support/fake-schema.js';

const USER: AuthUser = Object.freeze({
  id: 7,
  username: 'u',
  is_admin: false,
  is_authenticated: true,
  claims: {},
});

const rows = (...policies: Array<[string, string, string]>): PolicyRow[] =>
  policies.map(([table_name, action, expression], i) => ({
    id: i + 1,
    table_name,
    action,
    expression,
    description: '',
    columns: null,
  }));

const schema = fakeSchema(
  fakeTable('notes', { id: 'integer', user_id: 'integer', body: 'text' }),
  fakeTable('a.b', { id: 'integer' }),
  fakeTable('a_b', { id: 'integer' }),
  fakeTable('odd', [
    fakeColumn('id', 'integer'),
    fakeColumn('select', 'text'),
    fakeColumn('limit', 'integer'),
    fakeColumn('a b', 'text'),
    fakeColumn('a_b', 'text'),
  ]),
  fakeTable('{x}', { id: 'integer' }),
  fakeTable('auth_sessions', { id: 'integer' }),
  fakeTable('auth_users', [
    fakeColumn('id', 'integer'),
    fakeColumn('username', 'text'),
    fakeColumn('password', 'text'),
    fakeColumn('username_key', 'text'),
    fakeColumn('is_admin', 'boolean'),
  ]),
);

async function viewOf(user: AuthUser, policies: PolicyRow[] | undefined) {
  return callerView({
    snapshot: schema,
    user,
    policies: policies === undefined ? undefined : compilePolicySet(policies, sqliteDialect),
  });
}

describe('callerView', () => {
  it('keeps the actions not denied whatever the row, and leaves out a table with none', async () => {
    const policies = rows(
      ['notes', 'read', ''],
      ['notes', 'update', 'user_id = auth_user.id'],
      ['notes', 'delete', 'auth_user.is_admin'],
    );
    const anonymous = await viewOf(ANONYMOUS, policies);
    expect(anonymous.tables.map((t) => [t.table.name, [...t.actions].sort()])).toEqual([['notes', ['read']]]);
    const user = await viewOf(USER, policies);
    expect(user.tables.map((t) => [t.table.name, [...t.actions].sort()])).toEqual([
      ['notes', ['read', 'update']],
    ]);
  });

  it('serves every table but the internal ones while auth is off, secret columns left out', async () => {
    const view = await viewOf(ANONYMOUS, undefined);
    expect(view.authEnabled).toBe(false);
    expect(view.tables.map((t) => t.table.name)).toEqual(['a.b', 'a_b', 'auth_users', 'notes', 'odd', '{x}']);
    const users = view.tables.find((t) => t.table.name === 'auth_users');
    expect(users?.readable.map((c) => c.name)).toEqual(['id', 'username', 'is_admin']);
    expect(users?.writable.map((c) => c.name)).toEqual(['id', 'username', 'is_admin']);
  });

  it("keeps a non-admin's body off the admin-only columns of auth_users while auth is on", async () => {
    const policies = rows(['auth_users', 'all', 'id = auth_user.id']);
    const users = (await viewOf(USER, policies)).tables.find((t) => t.table.name === 'auth_users');
    expect(users?.writable.map((c) => c.name)).toEqual(['username']);
    const admin = (await viewOf({ ...USER, is_admin: true }, policies)).tables.find(
      (t) => t.table.name === 'auth_users',
    );
    expect(admin?.writable.map((c) => c.name)).toEqual(['id', 'username', 'is_admin']);
  });

  it('gives two callers with the same decisions the same key, and different decisions different keys', async () => {
    const policies = rows(['notes', 'read', ''], ['notes', 'create', 'auth_user.is_authenticated']);
    const other: AuthUser = { ...USER, id: 8 };
    expect(viewKey(await viewOf(USER, policies))).toBe(viewKey(await viewOf(other, policies)));
    expect(viewKey(await viewOf(USER, policies))).not.toBe(viewKey(await viewOf(ANONYMOUS, policies)));
  });
});

describe('openApiDocument', () => {
  it('names components safely and distinctly, and keeps reserved names out of the filters', async () => {
    const doc = openApiDocument(await viewOf(ANONYMOUS, undefined), 'v');
    const schemas = Object.keys(doc.components['schemas'] as object);
    expect(schemas.filter((s) => !s.endsWith('.insert') && !s.endsWith('.update'))).toEqual([
      'Error',
      'PgrstError',
      'table.a_b',
      'table.a_b_2',
      'table.auth_users',
      'table.notes',
      'table.odd',
      'table._x_',
    ]);
    const parameters = doc.components['parameters'] as Record<string, { name: string }>;
    const filterNames = (path: string, method: string): unknown[] =>
      (doc.paths[path]?.[method] as { parameters: Array<{ $ref: string }> }).parameters
        .map((p) => p.$ref.replace('#/components/parameters/', ''))
        .filter((key) => key.includes('.filter.'))
        .map((key) => parameters[key]?.name);
    expect(filterNames('/odd', 'get')).toEqual(['id', 'limit', 'a b', 'a_b']);
    expect(filterNames('/rest/v1/odd', 'get')).toEqual(['id', 'a b', 'a_b']);
    expect(Object.keys(parameters).filter((k) => k.startsWith('seed.filter.odd.'))).toEqual([
      'seed.filter.odd.id',
      'seed.filter.odd.limit',
      'seed.filter.odd.a_b',
      'seed.filter.odd.a_b_2',
    ]);
    expect(Object.keys(doc.paths)).toContain('/%7Bx%7D/{key}');
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc) as Record<string, unknown>);
    expect(result.errors).toBeUndefined();
    expect(() => validator.resolveRefs()).not.toThrow();
    expect(Object.keys(doc.paths)).toContain('/a.b');
  });

  it('documents a read_mine-only table on the seed path alone', async () => {
    const doc = openApiDocument(
      await viewOf(USER, rows(['notes', 'read_mine', 'user_id = auth_user.id'])),
      'v',
    );
    expect(Object.keys(doc.paths['/notes'] ?? {})).toEqual(['get']);
    expect(doc.paths['/rest/v1/notes']).toBeUndefined();
    expect(doc.paths['/notes/{key}']).toBeUndefined();
  });
});
