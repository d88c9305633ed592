// readableColumns and writableColumns (compiler/columns.ts) against the meaning of
// docs/policy-language.md taken row by row: a column shows in a visible row exactly when an
// applying row that grants it is TRUE for that row (the primary key always), and a body may set
// it exactly when such a row is TRUE for the row as written. The resolver's shortcuts (always,
// hidden, never) and its masks (`when`, evaluated in-process) must say the same on every row.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { grantsColumn, readableColumns, writableColumns, type ColumnGrant } from '../../compiler/columns.js';
import { evaluate } from '../../compiler/evaluate.js';
import { ANONYMOUS, type AuthUser, type ColumnTypes } from '../../compiler/types.js';
import type { ColumnRule } from '../../grammar/column-rule.js';
import { parsePolicy } from '../../grammar/parse-policy.js';
import { exprArbitrary } from '../support/policy-arbitraries.js';

const COLUMNS: ColumnTypes = new Map([
  ['id', 'integer'],
  ['user_id', 'integer'],
  ['team_id', 'integer'],
  ['note', 'text'],
  ['email', 'text'],
]);
const NAMES = [...COLUMNS.keys()];

const USERS: readonly AuthUser[] = [
  ANONYMOUS,
  { id: 7, username: 'alice', is_admin: false, is_authenticated: true, claims: { team: 3 } },
  { id: 9, username: 'bob', is_admin: false, is_authenticated: true, claims: { team: '2' } },
  { id: 1, username: 'admin', is_admin: true, is_authenticated: true, claims: {} },
];

const POOL = [
  '',
  'false',
  'auth_user.is_admin',
  'not auth_user.is_admin',
  'auth_user.is_authenticated',
  'user_id = auth_user.id',
  'team_id = 1',
  'team_id = auth_user.claims.team',
  'note is null',
  'user_id = auth_user.id or team_id = 2',
  'auth_user.is_admin and team_id = 1',
  'auth_user.is_admin or user_id = auth_user.id',
].map((text) => parsePolicy(text));

const expr = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...POOL) },
  { weight: 1, arbitrary: exprArbitrary({ columns: ['user_id', 'team_id', 'note'], claims: ['team'] }) },
);
const at = { offset: 0, line: 1, column: 1 };
const rule: fc.Arbitrary<ColumnRule> = fc.oneof(
  fc.constant<ColumnRule>({ kind: 'all' }),
  fc
    .tuple(fc.constantFrom('only' as const, 'except' as const), fc.subarray(NAMES, { minLength: 1 }))
    .map(([kind, names]): ColumnRule => ({ kind, columns: names.map((name) => ({ name, pos: at })) })),
);
const grants = fc
  .array(fc.tuple(expr, rule, fc.constantFrom('people', 'all')), { minLength: 1, maxLength: 4 })
  .map((gs) =>
    gs.map(([e, r, tableName], i): ColumnGrant => ({ policyId: i + 1, tableName, expr: e, rule: r })),
  );
const tableRow = fc.record({
  id: fc.integer({ min: 1, max: 99 }),
  user_id: fc.constantFrom(null, 1, 7, 9),
  team_id: fc.constantFrom(null, 1, 2, 3),
  note: fc.constantFrom(null, 'x'),
  email: fc.constantFrom(null, 'a@b'),
});
const tableRows = fc.array(tableRow, { minLength: 1, maxLength: 6 });

const isTrue = (g: ColumnGrant, user: AuthUser, row: Record<string, unknown>): boolean =>
  evaluate(g.expr, user, row, COLUMNS) === true;

describe('column access agrees with the row-by-row meaning', () => {
  it('read: always, masked (its condition) and hidden, on every visible row', () => {
    fc.assert(
      fc.property(grants, tableRows, fc.constantFrom(...USERS), (gs, rows, user) => {
        const access = readableColumns({ grants: gs, user, columns: COLUMNS, primaryKey: ['id'] });
        for (const row of rows) {
          if (!gs.some((g) => isTrue(g, user, row))) continue;
          for (const column of NAMES) {
            const shown =
              column === 'id' || gs.some((g) => isTrue(g, user, row) && grantsColumn(g.rule, column));
            const a = access.columns.get(column);
            const said =
              a?.kind === 'always'
                ? true
                : a?.kind === 'masked'
                  ? evaluate(a.when, user, row, COLUMNS) === true
                  : false;
            expect({ column, row, said }).toEqual({ column, row, said: shown });
          }
        }
      }),
      { numRuns: 400 },
    );
  });

  it('write: always, when (its condition) and never, on every row as written', () => {
    fc.assert(
      fc.property(grants, tableRows, fc.constantFrom(...USERS), (gs, rows, user) => {
        const access = writableColumns({ grants: gs, user, columns: COLUMNS, primaryKey: ['id'] });
        for (const row of rows) {
          for (const column of NAMES) {
            const allowed = gs.some((g) => isTrue(g, user, row) && grantsColumn(g.rule, column));
            const a = access.columns.get(column);
            const said =
              a?.kind === 'always'
                ? true
                : a?.kind === 'when'
                  ? evaluate(a.when, user, row, COLUMNS) === true
                  : false;
            expect({ column, row, said }).toEqual({ column, row, said: allowed });
          }
        }
      }),
      { numRuns: 400 },
    );
  });
});
