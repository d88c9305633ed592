// relation-health: rows on a cycle and subqueries on unindexed columns, as the start-up log and
// `policy explain` report them.

import { describe, expect, it } from 'vitest';
import { compilePolicySet } from '../../../../compiler/policy-set.js';
import { sqliteDialect } from '../../../../compiler/sql/sqlite-dialect.js';
import type { ColumnType, PolicyRow } from '../../../../compiler/types.js';
import type { SchemaSnapshot, TableInfo } from '../../../../runtime/db/adapter.js';
import { indexWarning, relationProblems } from '../../../../runtime/policies/relation-health.js';
import { fakeTable } from '../../../support/fake-schema.js';

const table = (name: string, columns: Readonly<Record<string, ColumnType>>): TableInfo =>
  fakeTable(name, columns);

const schema: SchemaSnapshot = {
  tables: new Map(
    [
      table('docs', { id: 'integer', team_id: 'integer' }),
      table('members', { id: 'integer', team_id: 'integer', user_id: 'integer' }),
    ].map((t) => [t.name, t]),
  ),
};

const row = (id: number, table_name: string, expression: string): PolicyRow => ({
  id,
  table_name,
  action: 'read',
  expression,
  description: '',
  columns: null,
});

describe('relationProblems', () => {
  it('reports a cycle written by hand once, with its rows and path', () => {
    const set = compilePolicySet(
      [
        row(1, 'docs', 'team_id in (select team_id from members where user_id = auth_user.id)'),
        row(2, 'members', 'exists (select from docs where docs.team_id = members.team_id)'),
      ],
      sqliteDialect,
    );
    const problems = relationProblems(set, schema, new Map([['members', new Set(['user_id'])]]));
    expect(problems).toEqual([
      {
        kind: 'cycle',
        path: 'docs → members → docs',
        policyIds: [1, 2],
        message:
          'policies 1, 2 make a cycle through subqueries (docs → members → docs), so they are broken: they deny until changed',
      },
    ]);
  });

  it('reports a subquery none of whose columns leads an index, once', () => {
    const set = compilePolicySet(
      [
        row(1, 'docs', 'team_id in (select team_id from members where user_id = auth_user.id)'),
        row(2, 'members', 'user_id = auth_user.id'),
      ],
      sqliteDialect,
    );
    const problems = relationProblems(set, schema, new Map([['members', new Set(['id'])]]));
    expect(problems.map((p) => p.kind === 'unindexed' && [p.table, p.columns])).toEqual([
      ['members', ['team_id', 'user_id']],
    ]);
    expect(relationProblems(set, schema, new Map([['members', new Set(['user_id'])]]))).toEqual([]);
  });
});

describe('indexWarning', () => {
  it.each([
    [['user_id'], new Set<string>(), "no index on 'user_id' of table 'members'"],
    [['user_id'], new Set(['user_id']), undefined],
    [[], new Set<string>(), undefined],
  ] as const)('%j with indexes %j', (columns, indexed, message) => {
    const warning = indexWarning('members', columns, new Map([['members', indexed]]));
    if (message === undefined) expect(warning).toBeUndefined();
    else expect(warning).toMatch(message);
  });
});
