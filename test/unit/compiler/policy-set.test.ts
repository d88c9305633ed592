import { describe, expect, it } from 'vitest';
import type { ColumnTypes } from '../../../compiler/types.js';
import { compilePolicySet, type Decision } from '../../../compiler/policy-set.js';
import { dialects } from '../../../compiler/sql/dialects.js';
import { sqliteDialect } from '../../../compiler/sql/sqlite-dialect.js';
import { renderSql } from '../../../compiler/sql/fragment.js';
import { ANONYMOUS, type AuthUser, type PolicyRow } from '../../../compiler/types.js';

const COLUMNS: ColumnTypes = new Map([
  ['id', 'integer'],
  ['user_id', 'integer'],
  ['author_id', 'integer'],
  ['org', 'text'],
  ['title', 'text'],
] as const);
const NO_OWNER: ColumnTypes = new Map([
  ['id', 'integer'],
  ['title', 'text'],
] as const);

const USER: AuthUser = {
  id: 7,
  username: 'alice',
  is_admin: false,
  is_authenticated: true,
  claims: { org: 'acme' },
};
const ADMIN: AuthUser = { id: 1, username: 'root', is_admin: true, is_authenticated: true, claims: {} };
const USERS = { anonymous: ANONYMOUS, user: USER, admin: ADMIN } as const;

const row = (id: number, table_name: string, action: string, expression: string): PolicyRow => ({
  id,
  table_name,
  action,
  expression,
  description: `row ${id}`,
  columns: null,
});
const single = (expression: string): readonly PolicyRow[] => [row(1, 'posts', 'all', expression)];

type Kind = Decision['kind'];
/** The seed's four forms (docs/policy-language.md) × anonymous / logged-in / admin. */
const SEED_FORMS: readonly (readonly [
  string,
  Readonly<Record<keyof typeof USERS, Kind>>,
  string | undefined,
])[] = [
  ['', { anonymous: 'allow', user: 'allow', admin: 'allow' }, undefined],
  ['auth_user.is_authenticated', { anonymous: 'deny', user: 'allow', admin: 'allow' }, undefined],
  ['auth_user.is_admin', { anonymous: 'deny', user: 'deny', admin: 'allow' }, undefined],
  ['user_id = auth_user.id', { anonymous: 'deny', user: 'filter', admin: 'filter' }, '("user_id" = ?)'],
];

describe('compilePolicySet → policyFor → decide', () => {
  describe.each(SEED_FORMS)('%j', (expression, expected, predicate) => {
    it.each(Object.keys(USERS) as (keyof typeof USERS)[])('%s', (who) => {
      const policy = compilePolicySet(single(expression), sqliteDialect).policyFor('posts', 'read', COLUMNS);
      const decision = policy.decide(USERS[who]);
      expect(decision.kind).toBe(expected[who]);
      if (decision.kind === 'filter')
        expect(renderSql(sqliteDialect, decision.predicate, USERS[who]).text).toBe(predicate);
    });
  });

  it.each([
    ['auth_user.is_admin or user_id = auth_user.id', USER, 'filter'],
    ['auth_user.is_admin or user_id = auth_user.id', ADMIN, 'allow'],
    ['auth_user.is_admin and user_id = auth_user.id', USER, 'deny'],
    ['org = auth_user.claims.org', ANONYMOUS, 'deny'],
    ['org = auth_user.claims.org', USER, 'filter'],
    ['not (user_id = auth_user.id and auth_user.claims.missing)', USER, 'filter'],
    ['user_id = auth_user.id and auth_user.claims.missing', USER, 'deny'],
    ['user_id in (1, null) or auth_user.is_admin', USER, 'filter'],
    ['user_id not in (1, null)', USER, 'deny'],
    ['title is null or auth_user.is_authenticated', ANONYMOUS, 'filter'],
    ['title is null or auth_user.is_authenticated', USER, 'allow'],
  ] as const)('%s for %o decides %s', (expression, user, kind) => {
    const policy = compilePolicySet(single(expression), sqliteDialect).policyFor('posts', 'update', COLUMNS);
    expect(policy.decide(user).kind).toBe(kind);
  });

  it('ORs the chosen rows of one level', () => {
    const set = compilePolicySet(
      [row(1, 'posts', 'read', 'auth_user.is_admin'), row(2, 'posts', 'read', 'user_id = auth_user.id')],
      sqliteDialect,
    );
    const policy = set.policyFor('posts', 'read', COLUMNS);
    expect(policy.resolution.rows.map((r) => r.id)).toEqual([1, 2]);
    expect(policy.decide(ADMIN).kind).toBe('allow');
    expect(policy.decide(USER).kind).toBe('filter');
    expect(policy.decide(ANONYMOUS).kind).toBe('deny');
    expect(policy.ownerColumns).toEqual([]);
  });

  it('denies when no row applies', () => {
    const policy = compilePolicySet([row(1, 'posts', 'read', '')], sqliteDialect).policyFor(
      'posts',
      'delete',
      COLUMNS,
    );
    expect(policy.resolution.level).toBe('none');
    expect(policy.decide(ADMIN).kind).toBe('deny');
    expect(policy.check({}, ADMIN)).toBe(false);
  });

  it('names the columns a table lacks and denies everyone there (the default policy on a table without user_id)', () => {
    const set = compilePolicySet([row(3, 'all', 'all', 'user_id = auth_user.id')], sqliteDialect);
    const policy = set.policyFor('tags', 'read', NO_OWNER);
    expect(policy.missingColumns).toEqual(['user_id']);
    expect(policy.ownerColumns).toEqual([]);
    expect(policy.decide(ADMIN).kind).toBe('deny');
    expect(policy.check({ user_id: 1 }, ADMIN)).toBe(false);
    expect(set.policyFor('posts', 'read', COLUMNS).missingColumns).toEqual([]);
  });

  it('keeps the syntax error of a row that does not parse; that row denies, the others still decide', () => {
    const set = compilePolicySet(
      [row(1, 'posts', 'read', 'user_id = = 1'), row(2, 'posts', 'read', 'auth_user.is_admin')],
      sqliteDialect,
    );
    const parsed = set.policies[0];
    expect(parsed?.ok).toBe(false);
    if (parsed?.ok === false) expect(parsed.error.message).toMatch(/at 1:11/);
    const policy = set.policyFor('posts', 'read', COLUMNS);
    expect(policy.issues).toEqual([
      {
        policyId: 1,
        kind: 'syntax',
        message: expect.stringMatching(/at 1:11/),
        pos: { offset: 10, line: 1, column: 11 },
      },
    ]);
    expect(policy.decide(ADMIN).kind).toBe('allow');
    expect(policy.decide(USER).kind).toBe('deny');
  });

  it('a row that does not type-check on this table denies, with the problem kept', () => {
    const set = compilePolicySet([row(1, 'all', 'all', 'title = 5 or auth_user.is_admin')], sqliteDialect);
    const policy = set.policyFor('posts', 'read', COLUMNS);
    expect(policy.issues.map((i) => [i.policyId, i.kind, i.message])).toEqual([
      [1, 'type', 'cannot compare a text with a number'],
    ]);
    expect(policy.decide(ADMIN).kind).toBe('deny');
  });

  it.each([
    ['user_id = auth_user.id', ['user_id']],
    ['auth_user.id = author_id', ['author_id']],
    [
      'author_id = auth_user.id and (org = auth_user.claims.org and user_id = auth_user.id)',
      ['author_id', 'user_id'],
    ],
    ['author_id = auth_user.id or auth_user.is_admin', []],
    ['not (author_id = auth_user.id)', []],
    ['author_id != auth_user.id', []],
    ['author_id = auth_user.claims.id', []],
  ] as const)('owner columns of %s: %j', (expression, owners) => {
    expect(
      compilePolicySet(single(expression), sqliteDialect).policyFor('posts', 'create', COLUMNS).ownerColumns,
    ).toEqual(owners);
  });

  it('checks new values in-process: TRUE only', () => {
    const policy = compilePolicySet(
      single('user_id = auth_user.id and title is not null'),
      sqliteDialect,
    ).policyFor('posts', 'create', COLUMNS);
    expect(policy.check({ user_id: 7, title: 'x' }, USER)).toBe(true);
    expect(policy.check({ user_id: '7', title: 'x' }, USER)).toBe(true);
    expect(policy.check({ user_id: 8, title: 'x' }, USER)).toBe(false);
    expect(policy.check({ user_id: 7 }, USER)).toBe(false);
    expect(policy.check({ user_id: 7, title: 'x' }, ANONYMOUS)).toBe(false);
  });

  it('compiles once per (table, action) and again only when the columns change', () => {
    const set = compilePolicySet(single('user_id = auth_user.id'), dialects.postgres);
    const first = set.policyFor('posts', 'read', COLUMNS);
    expect(set.policyFor('posts', 'read', new Map(COLUMNS))).toBe(first);
    expect(set.policyFor('posts', 'update', COLUMNS)).not.toBe(first);
    const changed = set.policyFor('posts', 'read', NO_OWNER);
    expect(changed).not.toBe(first);
    expect(changed.missingColumns).toEqual(['user_id']);
  });
});
