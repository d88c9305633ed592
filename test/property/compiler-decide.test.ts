// Property tests of the in-process decision (pure, no database): what `decide` concludes from
// auth_user alone never contradicts `evaluate` on any row, and `check` is `evaluate` = TRUE.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  compileCondition,
  evaluate,
  FALSE,
  outcomesForUser,
  TRUE,
  UNKNOWN,
} from '../../compiler/evaluate.js';
import { compilePolicySet } from '../../compiler/policy-set.js';
import { sqliteDialect } from '../../compiler/sql/sqlite-dialect.js';
import type { PolicyRow } from '../../compiler/types.js';
import { printPolicy } from '../../grammar/print-policy.js';
import {
  conditionArbitrary,
  edgeRows,
  TABLE,
  TABLE_COLUMNS,
  userArbitrary,
} from '../unit/compiler/support/typed-policies.js';

const ROWS = edgeRows(60);
const NUM_RUNS = Number(process.env['FC_NUM_RUNS'] ?? 300);
const outcomeOf = (v: boolean | null | undefined): number => (v === null ? UNKNOWN : v ? TRUE : FALSE);

describe('decisions from auth_user alone', () => {
  it('the outcomes predicted for a user include the result on every row', () => {
    fc.assert(
      fc.property(conditionArbitrary, userArbitrary, (expr, user) => {
        const predicted = outcomesForUser(compileCondition(expr, TABLE_COLUMNS), user);
        for (const row of ROWS) {
          const actual = evaluate(expr, user, row, TABLE_COLUMNS);
          expect(predicted & outcomeOf(actual), `row ${row.id} gives ${String(actual)}`).not.toBe(0);
        }
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('allow means every row passes, deny means none does, and check is evaluate = TRUE', () => {
    const printable = conditionArbitrary.filter((e) => [...printPolicy(e)].length <= 128);
    fc.assert(
      fc.property(printable, userArbitrary, (expr, user) => {
        const row: PolicyRow = {
          id: 1,
          table_name: TABLE,
          action: 'all',
          expression: printPolicy(expr),
          description: '',
          columns: null,
        };
        const policy = compilePolicySet([row], sqliteDialect).policyFor(TABLE, 'read', TABLE_COLUMNS);
        const passing = ROWS.filter((r) => evaluate(expr, user, r, TABLE_COLUMNS) === true);
        const decision = policy.decide(user);
        if (decision.kind === 'allow') expect(passing).toHaveLength(ROWS.length);
        if (decision.kind === 'deny') expect(passing).toHaveLength(0);
        for (const r of ROWS) expect(policy.check(r, user)).toBe(passing.includes(r));
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
