// The text of `policy explain`: the decision (the write's check follows the reason, on either
// path) and --row's verdict with its truth table.

import { describe, expect, it } from 'vitest';
import { formatExplanation } from '../../../cli/output/explanation.js';
import { postgresDialect } from '../../../compiler/sql/postgres-dialect.js';
import { sqliteDialect } from '../../../compiler/sql/sqlite-dialect.js';
import type { AuthUser, PolicyRow } from '../../../compiler/types.js';
import type { ColumnInfo, TableInfo } from '../../../runtime/db/adapter.js';
import { explainPolicy, type ExplainInput } from '../../../runtime/explain/explain-policy.js';
import { fakeColumn } from '../../support/fake-schema.js';

const columns: ColumnInfo[] = ['id', 'user_id'].map((name) =>
  fakeColumn(name, 'integer', 'integer', { autoIncrement: name === 'id' }),
);
const todos: TableInfo = {
  name: 'todos',
  columns,
  columnsByName: new Map(columns.map((c) => [c.name, c])),
  primaryKey: ['id'],
};
const rows: readonly PolicyRow[] = [
  {
    id: 3,
    table_name: 'all',
    action: 'all',
    expression: 'user_id = auth_user.id',
    description: 'owner',
    columns: null,
  },
];
const bob: AuthUser = { id: 2, username: null, is_admin: false, is_authenticated: true, claims: {} };
const input: ExplainInput = {
  rows,
  table: todos,
  schema: { tables: new Map([[todos.name, todos]]) },
  action: 'update',
  user: bob,
  adapter: { kind: 'sqlite', dialect: sqliteDialect },
  authEnabled: true,
  nativeRls: false,
  rlsRole: undefined,
};

/** The lines from `Decision:` to the end. */
const decision = (text: string): string => text.slice(text.indexOf('Decision: '));

describe('formatExplanation', () => {
  it('prints the portable check with its bound values after the reason', async () => {
    const text = formatExplanation(await explainPolicy(input));
    expect(decision(text)).toMatch(
      /^Decision: filter \("user_id" = \?\) \[2\]\n {2}allowed on the rows where the predicate is TRUE\n {2}check: \("user_id" = \?\) \[2\]\n {2}every changed row must make it TRUE as the database stored it [^\n]+\n$/,
    );
  });

  it('prints the WITH CHECK of the native path after the session settings', async () => {
    const text = formatExplanation(
      await explainPolicy({
        ...input,
        adapter: { kind: 'postgres', dialect: postgresDialect },
        nativeRls: true,
        rlsRole: 'app',
      }),
    );
    expect(decision(text)).toMatch(
      /^Decision: filter by row-level security \("user_id" = [^\n]+\)\n {2}[^\n]+\n {2}session settings: rest\.user_id='2' [^\n]+\n {2}check: WITH CHECK \("user_id" = [^\n]+\)\n {2}[^\n]+'rest_todos_update' judges it[^\n]+\n$/,
    );
  });

  it('prints nothing after the reason of a read or a denial', async () => {
    const read = formatExplanation(await explainPolicy({ ...input, action: 'read' }));
    expect(decision(read)).toBe(
      'Decision: filter ("user_id" = ?) [2]\n  allowed on the rows where the predicate is TRUE\n',
    );
    const denied = formatExplanation(
      await explainPolicy({ ...input, user: { ...bob, id: null, is_authenticated: false } }),
    );
    expect(decision(denied)).toBe(
      'Decision: deny 401\n  auth_user alone makes the expression FALSE or unknown, whatever the row\n',
    );
  });
});

describe('formatExplanation of --row', () => {
  const row = {
    table: 'todos',
    key: { column: 'id', value: '5' },
    values: { user_id: 7, title: "it's" },
    allowed: false,
    value: null,
    evaluated: true,
    verdict:
      'not visible to user 2: no chosen policy is TRUE for it, and an unknown (NULL) result allows nothing',
    conditions: [
      {
        policy_id: 4,
        expression: 'user_id = auth_user.id and auth_user.is_authenticated',
        value: null,
        decides: true,
        parts: [
          { expression: 'user_id = auth_user.id', value: null, decides: true, parts: [] },
          { expression: 'auth_user.is_authenticated', value: true, decides: false, parts: [] },
        ],
      },
      {
        policy_id: 6,
        expression: 'x = = 1',
        value: false,
        decides: false,
        error: 'expected … at 1:5',
        parts: [],
      },
    ],
  } as const;

  it('prints the verdict, the stored values as SQL writes them, and a truth table of the parts', async () => {
    const e = { ...(await explainPolicy({ ...input, action: 'read' })), row };
    const text = formatExplanation(e);
    expect(text.slice(text.indexOf('\nRow '))).toBe(
      [
        '',
        "Row id = '5' of table 'todos':",
        '  not visible to user 2: no chosen policy is TRUE for it, and an unknown (NULL) result allows nothing',
        '  stored values the policy reads: user_id = 7, title = "it\'s"',
        '  evaluated on the row by the database:',
        '  NULL   (the chosen policies, OR-ed)',
        '  NULL     #4 user_id = auth_user.id and auth_user.is_authenticated   ← decides',
        '  NULL       user_id = auth_user.id   ← decides',
        '  TRUE       auth_user.is_authenticated',
        '  FALSE    #6 BROKEN, counts as FALSE: expected … at 1:5',
        "  (NULL is SQL's unknown: it allows nothing, like FALSE)",
        '',
      ].join('\n'),
    );
  });

  it('stops after the verdict when the policy could not be evaluated on the row', async () => {
    const e = {
      ...(await explainPolicy({ ...input, action: 'read' })),
      row: { ...row, values: {}, evaluated: false, conditions: [] },
    };
    const text = formatExplanation(e);
    expect(text.endsWith(`\nRow id = '5' of table 'todos':\n  ${row.verdict}\n`)).toBe(true);
  });
});
