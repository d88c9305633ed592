import { describe, expect, it } from 'vitest';
import type { ColumnType } from '../../../../compiler/types.js';
import { RestError } from '../../../../errors/rest-error.js';
import { PolicySyntaxError } from '../../../../grammar/policy-syntax-error.js';
import type { SchemaSnapshot, TableInfo } from '../../../../runtime/db/adapter.js';
import {
  brokenPolicies,
  validatePolicy,
  type PolicyInput,
} from '../../../../runtime/policies/policy-service.js';
import { fakeTable } from '../../../support/fake-schema.js';

const table = (name: string, columns: Readonly<Record<string, ColumnType>>): TableInfo =>
  fakeTable(name, columns, { defaults: ['id'] });

const schema: SchemaSnapshot = {
  tables: new Map(
    [
      table('posts', {
        id: 'integer',
        user_id: 'integer',
        author_id: 'integer',
        title: 'text',
        published: 'boolean',
        meta: 'other',
      }),
      table('auth_users', { id: 'integer', username: 'text', password: 'text', is_admin: 'boolean' }),
    ].map((t) => [t.name, t]),
  ),
};

const valid = (overrides: PolicyInput = {}): PolicyInput => ({
  table_name: 'posts',
  action: 'read',
  expression: 'user_id = auth_user.id',
  description: 'own posts',
  ...overrides,
});

function rejection(input: PolicyInput): RestError {
  try {
    validatePolicy(input, schema);
  } catch (e) {
    if (e instanceof RestError) return e;
    throw e;
  }
  throw new Error('validatePolicy accepted the input');
}

describe('validatePolicy accepts', () => {
  it.each([
    ['the seed owner rule', valid()],
    ['the empty expression (anyone)', valid({ expression: '' })],
    ['every action', valid({ action: 'read_mine' })],
    ['action all', valid({ action: 'all' })],
    [
      'table all with any column name (checked at request time)',
      valid({ table_name: 'all', expression: 'tenant = auth_user.id' }),
    ],
    ['login required', valid({ expression: 'auth_user.is_authenticated' })],
    ['the admin rule on auth_users', valid({ table_name: 'auth_users', expression: 'auth_user.is_admin' })],
    ['a custom owner column', valid({ expression: 'author_id = auth_user.id' })],
    [
      'extended grammar',
      valid({ expression: "published = true or (title = 'x' and not user_id in (1, 2))" }),
    ],
    ['a claim', valid({ expression: 'user_id = auth_user.claims.org_id' })],
    ['is null on a column of another type', valid({ expression: 'meta is not null' })],
    ['limits exactly', valid({ description: 'd'.repeat(256), expression: `title = '${'x'.repeat(118)}'` })],
    ['a 256-character description of astral characters', valid({ description: '😀'.repeat(256) })],
  ])('%s', (_name, input) => {
    const policy = validatePolicy(input, schema);
    expect(policy.table_name).toBe(input.table_name);
    expect(policy.expression).toBe(input.expression);
    expect(policy.expr.kind).toBeTypeOf('string');
  });
});

describe('validatePolicy rejects with 400 invalid_policy', () => {
  it.each([
    [
      'an unknown action',
      valid({ action: 'select' }),
      'action',
      "action 'select' is not one of create, read, update, delete, read_mine, all",
    ],
    [
      'an action in upper case',
      valid({ action: 'READ' }),
      'action',
      "action 'READ' is not one of create, read, update, delete, read_mine, all",
    ],
    ['an unknown table', valid({ table_name: 'nope' }), 'table_name', "table 'nope' does not exist"],
    [
      'a table name over 128 characters',
      valid({ table_name: 't'.repeat(129) }),
      'table_name',
      'table_name must be at most 128 characters long',
    ],
    [
      'a description over 256 characters',
      valid({ description: 'd'.repeat(257) }),
      'description',
      'description must be at most 256 characters long',
    ],
    [
      'a missing description',
      valid({ description: undefined }),
      'description',
      'description must be a string',
    ],
    ['a numeric action', valid({ action: 1 }), 'action', 'action must be a string'],
    ['a null expression', valid({ expression: null }), 'expression', 'expression must be a string'],
    [
      'an expression over 128 characters',
      valid({ expression: `user_id = ${'1'.repeat(119)}` }),
      'expression',
      'expression must be at most 128 characters long',
    ],
  ])('%s', (_name, input, field, message) => {
    const e = rejection(input);
    expect(e.status).toBe(400);
    expect(e.toBody()).toEqual({
      error: { code: 'invalid_policy', message, details: expect.objectContaining({ field }) },
    });
  });

  it.each([
    ['a syntax error at the end', 'user_id = ', 1, 10],
    ['a doubled operator', 'user_id == auth_user.id', 1, 10],
    ['an unknown auth_user attribute', 'auth_user.nope', 1, 11],
    ['a column the table lacks', 'owner = auth_user.id', 1, 1],
    ['a column the table lacks on line 2', 'user_id = 1 or\n  missing = 2', 2, 3],
    ['the secret password column', "password = 'x'", 1, 1],
    ['comparing a column with itself', 'user_id = user_id', 1, 1],
    ['comparing a text column with a number', 'title = 1', 1, 1],
  ])('%s, with line:column and what was expected', (_name, expression, line, column) => {
    const e = rejection(
      valid({ expression, table_name: expression.startsWith('password') ? 'auth_users' : 'posts' }),
    );
    expect(e).toBeInstanceOf(PolicySyntaxError);
    expect(e.code).toBe('invalid_policy');
    expect(e.status).toBe(400);
    expect(e.details).toMatchObject({
      line,
      column,
      expected: expect.any(String),
      found: expect.any(String),
    });
    expect(e.message).toContain(`${line}:${column}`);
  });

  it('names the missing column and the table', () => {
    expect(rejection(valid({ expression: 'owner = auth_user.id' })).message).toBe(
      "column 'owner' does not exist in table 'posts' at 1:1",
    );
  });
});

describe('brokenPolicies: stored rows that allow nothing (edited by hand, or the schema changed)', () => {
  const row = (id: number, table_name: string, action: string, expression: string) => ({
    id,
    table_name,
    action,
    expression,
    description: 'stored',
    columns: null,
  });

  it('finds nothing wrong with valid rows, the default owner rule on all tables included', () => {
    const rows = [
      row(1, 'auth_users', 'all', 'auth_user.is_admin'),
      row(3, 'all', 'all', 'user_id = auth_user.id'),
    ];
    expect([...brokenPolicies(rows, schema)]).toEqual([]);
  });

  it.each([
    ['a syntax error', row(7, 'posts', 'read', 'user_id = = 1'), /^Expected .* at 1:11$|at 1:11/],
    [
      'a missing column',
      row(7, 'posts', 'read', 'owner = auth_user.id'),
      /^column 'owner' does not exist in table 'posts' at 1:1$/,
    ],
    [
      'a secret column',
      row(7, 'auth_users', 'read', "password = 'x'"),
      /^column 'password' of table 'auth_users' cannot be used in a policy at 1:1$/,
    ],
    ['a type error', row(7, 'posts', 'read', 'title = 1'), /at 1:1$/],
    [
      'an expression over 128 characters (the parser refuses it at request time too)',
      row(7, 'posts', 'read', `title = '${'x'.repeat(130)}'`),
      /^expression is longer than 128 characters/,
    ],
    ['an unknown table', row(7, 'gone', 'read', ''), /^table 'gone' does not exist$/],
    [
      'an unknown action',
      row(7, 'posts', 'write', ''),
      /^action 'write' is not one of create, read, update, delete, read_mine, all$/,
    ],
    [
      'an unknown subquery table',
      row(7, 'all', 'read', 'exists (select from nope where nope.id = 1)'),
      /nope/,
    ],
  ])('marks %s as invalid, with the message validation gives', (_what, broken, message) => {
    const found = brokenPolicies([row(1, 'posts', 'all', ''), broken], schema);
    expect([...found.keys()]).toEqual([7]);
    expect(found.get(7)?.kind).toBe('invalid');
    expect(found.get(7)?.message).toMatch(message);
  });

  it('marks every row of a cycle through subqueries, naming the cycle', () => {
    const rows = [
      row(4, 'posts', 'read', 'exists (select from auth_users where auth_users.id = posts.user_id)'),
      row(5, 'auth_users', 'read', 'exists (select from posts where posts.user_id = auth_users.id)'),
    ];
    const found = brokenPolicies(rows, schema);
    expect([...found.keys()].sort()).toEqual([4, 5]);
    expect(found.get(4)).toEqual({
      kind: 'cycle',
      message: expect.stringMatching(
        /^its subqueries make a cycle: (posts → auth_users → posts|auth_users → posts → auth_users)$/,
      ),
    });
  });
});
