import { describe, expect, it } from 'vitest';
import { resolvePolicies } from '../../../compiler/resolve.js';
import type { Action, PolicyRow } from '../../../compiler/types.js';

const row = (id: number, table_name: string, action: string, expression = ''): PolicyRow => ({
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

interface Case {
  readonly name: string;
  readonly rows: readonly PolicyRow[];
  readonly table: string;
  readonly action: Action;
  readonly level: 'table' | 'all' | 'none';
  readonly matched: Action | 'all' | undefined;
  readonly chosen: readonly number[];
}

const cases: readonly Case[] = [
  {
    name: 'seed: auth_users is decided by its own row',
    rows: SEED,
    table: 'auth_users',
    action: 'read',
    level: 'table',
    matched: 'all',
    chosen: [1],
  },
  {
    name: 'seed: any other table falls back to table_name all',
    rows: SEED,
    table: 'posts',
    action: 'update',
    level: 'all',
    matched: 'all',
    chosen: [3],
  },
  {
    name: 'a specific table beats all',
    rows: [...SEED, row(4, 'posts', 'read')],
    table: 'posts',
    action: 'read',
    level: 'table',
    matched: 'read',
    chosen: [4],
  },
  {
    name: 'a specific action beats all at the same level',
    rows: [row(4, 'posts', 'all', 'auth_user.is_admin'), row(5, 'posts', 'read')],
    table: 'posts',
    action: 'read',
    level: 'table',
    matched: 'read',
    chosen: [5],
  },
  {
    name: 'action all applies when the table has no row for the action',
    rows: [row(4, 'posts', 'all', 'auth_user.is_admin'), row(5, 'posts', 'read')],
    table: 'posts',
    action: 'delete',
    level: 'table',
    matched: 'all',
    chosen: [4],
  },
  {
    name: 'several rows at one level are all chosen (OR)',
    rows: [
      row(4, 'posts', 'read', 'a = 1'),
      row(5, 'posts', 'read', 'b = 2'),
      row(6, 'posts', 'all'),
      row(7, 'all', 'read'),
    ],
    table: 'posts',
    action: 'read',
    level: 'table',
    matched: 'read',
    chosen: [4, 5],
  },
  {
    name: 'a table with rows for other actions only falls to the all level',
    rows: [
      row(4, 'posts', 'read'),
      row(5, 'all', 'create', 'auth_user.is_authenticated'),
      row(6, 'all', 'all', 'auth_user.is_admin'),
    ],
    table: 'posts',
    action: 'create',
    level: 'all',
    matched: 'create',
    chosen: [5],
  },
  {
    name: 'read_mine is its own action: read rows do not cover it',
    rows: [row(4, 'posts', 'read'), row(5, 'all', 'all', 'user_id = auth_user.id')],
    table: 'posts',
    action: 'read_mine',
    level: 'all',
    matched: 'all',
    chosen: [5],
  },
  {
    name: 'no row at all denies',
    rows: [],
    table: 'posts',
    action: 'read',
    level: 'none',
    matched: undefined,
    chosen: [],
  },
  {
    name: 'rows for other tables and actions only: deny',
    rows: [row(4, 'comments', 'all'), row(5, 'all', 'read'), row(6, 'posts', 'delete')],
    table: 'posts',
    action: 'update',
    level: 'none',
    matched: undefined,
    chosen: [],
  },
  {
    name: 'table names match exactly (case-sensitive)',
    rows: [row(4, 'Posts', 'all'), row(5, 'all', 'all', 'auth_user.is_admin')],
    table: 'posts',
    action: 'read',
    level: 'all',
    matched: 'all',
    chosen: [5],
  },
];

describe('resolvePolicies (docs/policy-language.md)', () => {
  it.each(cases)('$name', ({ rows, table, action, level, matched, chosen }) => {
    const r = resolvePolicies(rows, table, action);
    expect(r.level).toBe(level);
    expect(r.matchedAction).toBe(matched);
    expect(r.rows.map((x) => x.id)).toEqual(chosen);
  });

  it('traces every candidate row of the table and of all with why it was or was not chosen', () => {
    const rows = [
      row(4, 'posts', 'all'),
      row(5, 'posts', 'read'),
      row(6, 'posts', 'delete'),
      row(7, 'all', 'all'),
      row(8, 'other', 'all'),
    ];
    const r = resolvePolicies(rows, 'posts', 'read');
    expect(r.candidates.map((c) => [c.row.id, c.chosen, c.reason])).toEqual([
      [4, false, "action 'read' rows beat action 'all'"],
      [5, true, 'chosen (level table, action read)'],
      [6, false, "action 'delete' does not cover 'read'"],
      [7, false, "table_name 'all' is not the deciding level"],
    ]);
    expect(r.steps).toEqual([
      "level: table 'posts' has rows for action 'read' or 'all'",
      "rows: 1 row(s) with action 'read' (they beat action 'all')",
      'decision: the chosen row decides',
    ]);
  });

  it('says why a request with no applicable row is denied', () => {
    const r = resolvePolicies([row(4, 'posts', 'delete')], 'posts', 'read');
    expect(r.steps).toEqual([
      "level: no row for table 'posts' or 'all' covers action 'read'",
      'decision: no chosen row, so the request is denied',
    ]);
  });
});
