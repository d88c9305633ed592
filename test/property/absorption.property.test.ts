// withoutAbsorbed (compiler/policy-set.ts) drops a chosen row whose conjuncts include every
// conjunct of another: the OR of what is left must decide every caller and row exactly as the OR
// of all of them, in three-valued logic (true, false or unknown), and a row written as another
// row's condition and more must be gone.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { evaluate } from '../../compiler/evaluate.js';
import { withoutAbsorbed } from '../../compiler/policy-set.js';
import { ANONYMOUS, type AuthUser, type ColumnTypes } from '../../compiler/types.js';
import { ast, type Expr } from '../../grammar/ast.js';
import { parsePolicy } from '../../grammar/parse-policy.js';
import { exprArbitrary } from '../support/policy-arbitraries.js';

const COLUMNS: ColumnTypes = new Map([
  ['id', 'integer'],
  ['user_id', 'integer'],
  ['team_id', 'integer'],
  ['note', 'text'],
]);

const USERS: readonly AuthUser[] = [
  ANONYMOUS,
  { id: 7, username: 'alice', is_admin: false, is_authenticated: true, claims: { team: 3 } },
  { id: 1, username: 'admin', is_admin: true, is_authenticated: true, claims: {} },
];

const base = exprArbitrary({ columns: ['user_id', 'team_id', 'note'], claims: ['team'] });
const POOL = ['user_id = auth_user.id', 'team_id = 1', 'note is null', 'auth_user.is_admin'].map((t) =>
  parsePolicy(t),
);
const part = fc.oneof(fc.constantFrom(...POOL), base);

/** Rows' expressions where some are another's conjuncts and more (the column-granting pattern). */
const rows: fc.Arbitrary<readonly Expr[]> = fc
  .array(part, { minLength: 1, maxLength: 4 })
  .chain((firsts) =>
    fc
      .array(fc.tuple(fc.nat({ max: firsts.length - 1 }), part), { maxLength: 3 })
      .map((more) => [...firsts, ...more.map(([i, extra]) => ast.and([firsts[i] as Expr, extra]))]),
  )
  .chain((all) => fc.shuffledSubarray(all, { minLength: all.length, maxLength: all.length }));

const tableRow = fc.record({
  id: fc.integer({ min: 1, max: 9 }),
  user_id: fc.constantFrom(null, 1, 7),
  team_id: fc.constantFrom(null, 1, 3),
  note: fc.constantFrom(null, 'x'),
});

const or = (exprs: readonly Expr[]): Expr =>
  exprs.length === 1 ? (exprs[0] as Expr) : ast.or(exprs.length === 0 ? [ast.boolean(false)] : exprs);

describe('absorbed policy rows', () => {
  it('the OR of the rows kept decides every caller and row as the OR of all of them', () => {
    fc.assert(
      fc.property(rows, fc.constantFrom(...USERS), tableRow, (exprs, user, row) => {
        const kept = withoutAbsorbed(exprs);
        expect(kept.length).toBeGreaterThan(0);
        expect(evaluate(or(kept), user, row, COLUMNS)).toBe(evaluate(or(exprs), user, row, COLUMNS));
      }),
      { numRuns: 400 },
    );
  });

  it('drops a row written as another row and more, and keeps one of two equal rows', () => {
    const [mine, done] = [parsePolicy('user_id = auth_user.id'), parsePolicy('note is null')];
    const narrower = ast.and([mine, done]);
    expect(withoutAbsorbed([narrower, mine])).toEqual([mine]);
    expect(withoutAbsorbed([mine, parsePolicy('user_id = auth_user.id')])).toEqual([mine]);
    expect(withoutAbsorbed([mine, done])).toEqual([mine, done]);
  });
});
