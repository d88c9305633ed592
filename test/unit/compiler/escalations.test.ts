import { describe, expect, it } from 'vitest';
import { findEscalations, innerWrites, mayAllowNonAdmin } from '../../../compiler/escalations.js';
import type { PolicyRow } from '../../../compiler/types.js';
import { parsePolicy } from '../../../grammar/parse-policy.js';

const row = (id: number, table_name: string, action: string, expression: string): PolicyRow => ({
  id,
  table_name,
  action,
  expression,
  description: `row ${id}`,
  columns: null,
});

const SEED: readonly PolicyRow[] = [
  row(1, 'auth_users', 'all', 'auth_user.is_admin'),
  row(2, 'auth_policies', 'all', 'auth_user.is_admin'),
  row(3, 'all', 'all', 'user_id = auth_user.id'),
];

const TEAM = 'team_id in (select team_id from members where user_id = auth_user.id)';
const SHARED = 'exists (select from shares where shares.doc_id = docs.id and shares.user_id = auth_user.id)';
const EDITOR = "exists (select from user_roles where user_id = auth_user.id and role = 'editor')";
const BANNED = 'not exists (select from bans where bans.user_id = auth_user.id)';

describe('mayAllowNonAdmin: is the expression FALSE for every non-admin from auth_user alone?', () => {
  const cases: ReadonlyArray<readonly [string, boolean]> = [
    ['auth_user.is_admin', false],
    ['auth_user.is_admin = true', false],
    ['auth_user.is_admin and user_id = auth_user.id', false],
    ['auth_user.is_admin and exists (select from members where user_id = auth_user.id)', false],
    ['false', false],
    ['auth_user.is_admin or false', false],
    ['not (not auth_user.is_admin)', false],
    ['', true],
    ['true', true],
    ['not auth_user.is_admin', true],
    ['auth_user.is_admin = false', true],
    ['auth_user.is_admin != true', true],
    ['auth_user.is_authenticated', true],
    ['user_id = auth_user.id', true],
    ['auth_user.id = 7', true],
    ["auth_user.username = 'root'", true],
    ['auth_user.id is null', true],
    ["auth_user.claims.role = 'admin'", true],
    ['auth_user.claims.admin', true],
    ['auth_user.is_admin or user_id = auth_user.id', true],
    ['exists (select from members where user_id = auth_user.id)', true],
    ['auth_user.id in (1, 2)', true],
  ];
  it.each(cases)('%s → %s', (expression, expected) => {
    expect(mayAllowNonAdmin(parsePolicy(expression))).toBe(expected);
  });
});

describe('innerWrites: which writes of an inner table make a subquery grant more', () => {
  const cases: ReadonlyArray<readonly [string, Readonly<Record<string, readonly string[]>>]> = [
    ['user_id = auth_user.id', {}],
    [TEAM, { members: ['create', 'update'] }],
    [SHARED, { shares: ['create', 'update'] }],
    [EDITOR, { user_roles: ['create', 'update'] }],
    [BANNED, { bans: ['delete', 'update'] }],
    ['team_id not in (select team_id from blocked)', { blocked: ['delete', 'update'] }],
    ['not (team_id in (select team_id from members))', { members: ['delete', 'update'] }],
    ['not not exists (select from members where user_id = auth_user.id)', { members: ['create', 'update'] }],
    [
      '(exists (select from members where user_id = auth_user.id)) = false',
      { members: ['create', 'update', 'delete'] },
    ],
    [
      'exists (select from members where not exists (select from bans where bans.user_id = members.user_id))',
      { members: ['create', 'update'], bans: ['delete', 'update'] },
    ],
    [
      'not exists (select from members where exists (select from bans where bans.user_id = members.user_id))',
      { members: ['delete', 'update'], bans: ['delete', 'update'] },
    ],
    [
      "exists (select from roles where role = 'a') or not exists (select from roles where role = 'b')",
      { roles: ['create', 'update', 'delete'] },
    ],
  ];
  it.each(cases)('%s', (expression, expected) => {
    const found = Object.fromEntries(
      [...innerWrites(parsePolicy(expression))].map(([t, actions]) => [t, [...actions].sort()]),
    );
    expect(found).toEqual(Object.fromEntries(Object.entries(expected).map(([t, a]) => [t, [...a].sort()])));
  });
});

/** [relation policy id, inner table, action, writing policy id] */
type Found = readonly [number, string, string, number];

const parse = (r: PolicyRow) => {
  try {
    return parsePolicy(r.expression);
  } catch {
    return undefined;
  }
};

describe('findEscalations: a relation policy whose inner table non-admins can write', () => {
  const cases: ReadonlyArray<{
    readonly name: string;
    readonly rows: readonly PolicyRow[];
    readonly found: readonly Found[];
  }> = [
    {
      name: 'the seed alone: no relation policy, no warning',
      rows: SEED,
      found: [],
    },
    {
      name: 'roles without write rows: the default all / all lets users create and update their roles',
      rows: [
        ...SEED,
        row(4, 'articles', 'all', EDITOR),
        row(5, 'user_roles', 'read', 'user_id = auth_user.id'),
      ],
      found: [
        [4, 'user_roles', 'create', 3],
        [4, 'user_roles', 'update', 3],
      ],
    },
    {
      name: 'roles as documented: admins write user_roles',
      rows: [
        ...SEED,
        row(4, 'articles', 'all', EDITOR),
        row(5, 'user_roles', 'read', 'user_id = auth_user.id'),
        row(6, 'user_roles', 'all', 'auth_user.is_admin'),
      ],
      found: [],
    },
    {
      name: 'teams and sharing as documented',
      rows: [
        ...SEED,
        row(4, 'tasks', 'all', TEAM),
        row(5, 'members', 'read', 'user_id = auth_user.id'),
        row(6, 'members', 'all', 'auth_user.is_admin'),
        row(7, 'docs', 'all', SHARED),
        row(8, 'shares', 'read', 'user_id = auth_user.id'),
        row(9, 'shares', 'all', 'auth_user.is_admin'),
      ],
      found: [],
    },
    {
      name: 'an inner table with no row for the write and no fallback: denied, so safe',
      rows: [row(4, 'tasks', 'all', TEAM), row(5, 'members', 'read', 'user_id = auth_user.id')],
      found: [],
    },
    {
      name: 'only the action that is open is named; update open alone',
      rows: [
        ...SEED,
        row(4, 'tasks', 'read', TEAM),
        row(5, 'members', 'all', 'auth_user.is_admin'),
        row(6, 'members', 'update', 'user_id = auth_user.id'),
      ],
      found: [[4, 'members', 'update', 6]],
    },
    {
      name: 'create open by an explicit row, two writing rows each named',
      rows: [
        ...SEED,
        row(4, 'tasks', 'read', TEAM),
        row(5, 'members', 'all', 'auth_user.is_admin'),
        row(6, 'members', 'create', 'auth_user.is_authenticated'),
        row(7, 'members', 'create', 'auth_user.is_admin'),
        row(8, 'members', 'create', "auth_user.claims.role = 'owner'"),
      ],
      found: [
        [4, 'members', 'create', 6],
        [4, 'members', 'create', 8],
      ],
    },
    {
      name: 'not exists: deleting the row that keeps a user out',
      rows: [...SEED, row(4, 'docs', 'read', BANNED), row(5, 'bans', 'create', 'auth_user.is_admin')],
      found: [
        [4, 'bans', 'update', 3],
        [4, 'bans', 'delete', 3],
      ],
    },
    {
      name: 'not exists with delete and update closed: creating a ban harms only oneself',
      rows: [
        ...SEED,
        row(4, 'docs', 'read', BANNED),
        row(5, 'bans', 'all', 'user_id = auth_user.id'),
        row(6, 'bans', 'delete', 'auth_user.is_admin'),
        row(7, 'bans', 'update', 'auth_user.is_admin'),
      ],
      found: [],
    },
    {
      name: 'a relation policy for every table',
      rows: [row(1, 'all', 'read', EDITOR), row(2, 'all', 'create', 'auth_user.is_authenticated')],
      found: [[1, 'user_roles', 'create', 2]],
    },
    {
      name: 'a broken writing row allows nothing; a broken relation row grants nothing',
      rows: [
        row(4, 'articles', 'all', EDITOR),
        row(5, 'user_roles', 'create', 'user_id = = auth_user.id'),
        row(6, 'docs', 'all', 'exists (select from shares where'),
        row(7, 'shares', 'all', ''),
      ],
      found: [],
    },
  ];
  it.each(cases)('$name', ({ rows, found }) => {
    const warnings = findEscalations(rows, parse);
    expect(warnings.map((w) => [w.relationPolicyId, w.table, w.action, w.policyId])).toEqual(found);
  });

  it('each warning names the inner table, the action and both policy rows', () => {
    const [warning] = findEscalations([...SEED, row(4, 'articles', 'all', EDITOR)], parse);
    expect(warning).toEqual({
      table: 'user_roles',
      action: 'create',
      policyId: 3,
      relationPolicyId: 4,
      relationTable: 'articles',
      message:
        "policy 4 (articles) grants access through rows of 'user_roles', and policy 3 (every table) lets non-admins create rows of 'user_roles': a user may grant themselves that access",
    });
  });
});
