import { describe, expect, it } from 'vitest';
import { compilePolicySet } from '../../../../compiler/policy-set.js';
import { sqliteDialect } from '../../../../compiler/sql/sqlite-dialect.js';
import {
  ANONYMOUS,
  type Action,
  type AuthUser,
  type ColumnType,
  type PolicyRow,
} from '../../../../compiler/types.js';
import type { DbSession, SchemaSnapshot, TableInfo } from '../../../../runtime/db/adapter.js';
import type { Authorization } from '../../../../runtime/enforce/authorizer.js';
import { createPortableAuthorizer } from '../../../../runtime/enforce/portable-authorizer.js';
import { RestError } from '../../../../errors/rest-error.js';
import { fakeTable } from '../../../support/fake-schema.js';

const table = (
  name: string,
  columns: Readonly<Record<string, ColumnType>>,
  defaults: readonly string[] = [],
): TableInfo => fakeTable(name, columns, { defaults });

const user = (id: number, is_admin = false): AuthUser => ({
  id,
  username: `u${id}`,
  is_admin,
  is_authenticated: true,
  claims: { user_id: id, is_admin },
});

const SEED: readonly PolicyRow[] = [
  {
    id: 1,
    table_name: 'auth_users',
    action: 'all',
    expression: 'auth_user.is_admin',
    description: 'users',
    columns: null,
  },
  {
    id: 2,
    table_name: 'auth_policies',
    action: 'all',
    expression: 'auth_user.is_admin',
    description: 'policies',
    columns: null,
  },
  {
    id: 3,
    table_name: 'all',
    action: 'all',
    expression: 'user_id = auth_user.id',
    description: 'owner',
    columns: null,
  },
  {
    id: 4,
    table_name: 'articles',
    action: 'all',
    expression: 'author_id = auth_user.id and (published = true or auth_user.is_admin)',
    description: 'articles',
    columns: null,
  },
  {
    id: 5,
    table_name: 'auth_users',
    action: 'read',
    expression: 'password is not null',
    description: 'probing the hash',
    columns: null,
  },
];

const notes = table('notes', { id: 'integer', user_id: 'integer', body: 'text' });
const plain = table('plain', { id: 'integer', body: 'text' });
const articles = table('articles', { id: 'integer', author_id: 'integer', published: 'boolean' });
const users = table('auth_users', { id: 'integer', username: 'text', password: 'text', is_admin: 'boolean' });

/** No other table: these policies have no subqueries. */
const NO_SCHEMA: SchemaSnapshot = { tables: new Map() };

const authorizer = createPortableAuthorizer({
  policies: { get: async () => ({ rows: SEED, compiled: compilePolicySet(SEED, sqliteDialect) }) },
});
const noSession: DbSession = {
  query: () => {
    throw new Error('the guard must not query');
  },
};

const decide = async (t: TableInfo, action: Action, u: AuthUser): Promise<Authorization> =>
  authorizer.authorize({ schema: NO_SCHEMA, table: t, action, user: u });

async function rejection(p: Promise<unknown>): Promise<RestError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof RestError) return e;
    throw e;
  }
  throw new Error('expected a rejection');
}

describe('portable authorizer decisions', () => {
  it.each([
    ['anonymous on an owner table', notes, 'read', ANONYMOUS, 'deny'],
    ['a user on an owner table', notes, 'read', user(1), 'filter'],
    ['an admin on an owner table (no admin bypass in the seed)', notes, 'delete', user(1, true), 'filter'],
    ['a user on auth_users', users, 'update', user(1), 'deny'],
    ['an admin on auth_users', users, 'create', user(1, true), 'allow'],
    ['an admin on articles (the owner part still filters)', articles, 'update', user(9, true), 'filter'],
    ['a user on articles', articles, 'update', user(9), 'filter'],
  ] as const)('%s → %s', async (_name, t, action, u, kind) => {
    expect((await decide(t, action, u)).kind).toBe(kind);
  });

  it('denies a logged-in user with 403 naming the column the table lacks; anonymous gets the plain denial', async () => {
    expect(await decide(plain, 'read', user(1))).toEqual({
      kind: 'deny',
      reason: {
        code: 'policy_column_missing',
        message: "the policy for plain uses column 'user_id', which table plain does not have",
        details: { table: 'plain', column: 'user_id' },
      },
    });
    expect(await decide(plain, 'read', ANONYMOUS)).toEqual({ kind: 'deny', reason: {} });
  });

  it('treats a policy naming the password hash as naming a missing column', async () => {
    expect(await decide(users, 'read', user(1, true))).toMatchObject({
      kind: 'deny',
      reason: { details: { column: 'password' } },
    });
  });
});

describe('portable authorizer write guards', () => {
  it('fills the owner column when missing and keeps a matching one', async () => {
    const a = await decide(notes, 'create', user(7));
    if (a.kind === 'deny') throw new Error('denied');
    expect(await a.guard?.prepareCreate?.([{ body: 'x' }, { body: 'y', user_id: 7 }], noSession)).toEqual([
      { body: 'x', user_id: 7 },
      { body: 'y', user_id: 7 },
    ]);
  });

  it('refuses a row owned by someone else with 403', async () => {
    const a = await decide(notes, 'create', user(7));
    if (a.kind === 'deny') throw new Error('denied');
    const e = await rejection(
      a.guard?.prepareCreate?.([{ body: 'x' }, { body: 'y', user_id: 8 }], noSession) ?? Promise.resolve(),
    );
    expect(e.status).toBe(403);
    expect(e.code).toBe('owner_mismatch');
  });

  it('hands create and update a check for the database to judge on the stored rows', async () => {
    for (const action of ['create', 'update'] as const) {
      const a = await decide(articles, action, user(3));
      if (a.kind !== 'filter') throw new Error(`expected a filter for ${action}`);
      // The database evaluates the policy on the rows as stored (docs/policy-language.md): the check is the predicate.
      expect(a.check).toBe(a.predicate);
    }
  });

  it('leaves the check of a create to the stored row even when the body already breaks the policy', async () => {
    const a = await decide(articles, 'create', user(3));
    if (a.kind === 'deny') throw new Error('denied');
    await expect(a.guard?.prepareCreate?.([{ published: false }], noSession)).resolves.toEqual([
      { published: false, author_id: 3 },
    ]);
  });

  it('adds no guard to reads and deletes', async () => {
    const read = await decide(notes, 'read', user(7));
    const del = await decide(notes, 'delete', user(7));
    expect(read.kind === 'filter' && (read.guard ?? read.check)).toBeFalsy();
    expect(del.kind === 'filter' && (del.guard ?? del.check)).toBeFalsy();
  });
});
