// fast-check arbitraries of well-typed policies over one fixed table, of users and of rows full of
// edge values — the inputs of the differential tests (evaluate ≡ SQL on every database ≡ RLS).

import fc from 'fast-check';
import { ast, type CompareOp, type Expr, type LiteralNode } from '../../../../grammar/ast.js';
import { analyze } from '../../../../compiler/analyze.js';
import type { ColumnTypes } from '../../../../compiler/types.js';
import { ANONYMOUS, type AuthUser } from '../../../../compiler/types.js';

/** The table of the differential tests: `t(id, user_id, org, score, flag, name)`. */
export const TABLE = 't';
export const TABLE_COLUMNS: ColumnTypes = new Map([
  ['id', 'integer'],
  ['user_id', 'integer'],
  ['org', 'text'],
  ['score', 'decimal'],
  ['flag', 'boolean'],
  ['name', 'text'],
] as const);

export type TestRow = Readonly<{
  id: number;
  user_id: number | null;
  org: string | null;
  score: number | null;
  flag: boolean | null;
  name: string | null;
}>;

/** Texts that collations, padding, case folding and UTF-16 order get wrong. */
export const EDGE_TEXTS: readonly string[] = [
  '',
  'a',
  'A',
  'a ',
  ' a',
  'a  ',
  'b',
  'B',
  'é',
  'É',
  'e',
  'ß',
  'ss',
  'ſ',
  '😀',
  '\uffff',
  'ﬀ',
  'z',
  'Z',
  '0',
  '1',
  '10',
  '2',
  'ab',
  'aB',
  "o'k",
  'a\\b',
  '%',
  '_',
  'null',
];
const textArb = fc.oneof(
  fc.constantFrom(...EDGE_TEXTS),
  fc.string({ unit: fc.constantFrom('a', 'A', 'b', ' ', 'é', '😀', 'ß', '1', '\uffff'), maxLength: 4 }),
);
const INTEGERS = [-3, -1, 0, 1, 2, 3, 7, 1_000_000] as const;
const intArb = fc.oneof(fc.constantFrom(...INTEGERS), fc.integer({ min: -10, max: 10 }));
const DECIMALS = [-1.5, -0.01, 0, 0.1, 0.5, 1, 2.25, 3, 99.99] as const;
const decimalArb = fc.constantFrom(...DECIMALS);

export const rowArbitrary = (id: number): fc.Arbitrary<TestRow> =>
  fc.record({
    id: fc.constant(id),
    user_id: fc.option(intArb, { freq: 4 }),
    org: fc.option(textArb, { freq: 4 }),
    score: fc.option(decimalArb, { freq: 4 }),
    flag: fc.option(fc.boolean(), { freq: 3 }),
    name: fc.option(textArb, { freq: 4 }),
  });

/** A deterministic pool of rows (ids 1..count), the same on every run. */
export function edgeRows(count: number): readonly TestRow[] {
  return Array.from(
    { length: count },
    (_, i) => fc.sample(rowArbitrary(i + 1), { numRuns: 1, seed: 7919 * (i + 1) })[0] as TestRow,
  );
}

export const CLAIM_NAMES = ['org', 'n', 'ok', 'x'] as const;
/** JSON claim values of every type, numeric strings inside and outside the 15-digit rule. */
export const CLAIM_VALUES: readonly unknown[] = [
  null,
  'a',
  'A',
  '',
  'a ',
  'é',
  '😀',
  '1',
  '2',
  '-3',
  '1.5',
  '007',
  ' 1',
  '1.',
  '1e3',
  '123456789012345',
  '1234567890123456',
  'true',
  'a\u0000',
  1,
  2,
  -3,
  0,
  0.1,
  1.5,
  2.25,
  1e21,
  true,
  false,
  [],
  {},
  [1],
  { a: 1 },
];

const claimsArb = fc.record(
  Object.fromEntries(CLAIM_NAMES.map((n) => [n, fc.constantFrom(...CLAIM_VALUES)])) as Record<
    (typeof CLAIM_NAMES)[number],
    fc.Arbitrary<unknown>
  >,
  { requiredKeys: [] },
);

export const userArbitrary: fc.Arbitrary<AuthUser> = fc.oneof(
  fc.constant(ANONYMOUS),
  fc.record({
    id: intArb,
    username: fc.option(fc.oneof(textArb, fc.constant('x\u0000')), { freq: 3 }),
    is_admin: fc.boolean(),
    is_authenticated: fc.constant(true),
    claims: claimsArb,
  }),
);

type ValueType = 'number' | 'text' | 'boolean';
const compareOps: readonly CompareOp[] = ['=', '!=', '<', '<=', '>', '>='];
const claimArb = fc.constantFrom(...CLAIM_NAMES).map((n) => ast.claim(n));

const literalOf: Readonly<Record<ValueType, fc.Arbitrary<LiteralNode>>> = {
  number: fc.oneof(
    intArb.map((n) => ast.integer(n)),
    decimalArb.map((n) => ast.decimal(n)),
  ),
  text: textArb.map((s) => ast.string(s)),
  boolean: fc.boolean().map((b) => ast.boolean(b)),
};
const column = (...names: string[]): fc.WeightedArbitrary<Expr> => ({
  weight: 4,
  arbitrary: fc.constantFrom(...names).map((c) => ast.column(c)),
});
const rare = (a: fc.Arbitrary<Expr>): fc.WeightedArbitrary<Expr> => ({ weight: 1, arbitrary: a });
/** Columns weigh most, so that most policies split the rows instead of deciding them all alike. */
const leafOf: Readonly<Record<ValueType, fc.Arbitrary<Expr>>> = {
  number: fc.oneof(column('id', 'user_id', 'score'), rare(fc.constant(ast.auth('id'))), rare(claimArb), {
    weight: 2,
    arbitrary: literalOf.number,
  }),
  text: fc.oneof(column('org', 'name'), rare(fc.constant(ast.auth('username'))), rare(claimArb), {
    weight: 2,
    arbitrary: literalOf.text,
  }),
  boolean: fc.oneof(
    column('flag'),
    rare(fc.constantFrom(ast.auth('is_admin'), ast.auth('is_authenticated'))),
    rare(claimArb),
    rare(literalOf.boolean),
  ),
};
const withNull = (a: fc.Arbitrary<Expr>): fc.Arbitrary<Expr> =>
  fc.oneof({ weight: 9, arbitrary: a }, { weight: 1, arbitrary: fc.constant(ast.null()) });

const compareOf = (operand: fc.Arbitrary<Expr>): fc.Arbitrary<Expr> =>
  fc.tuple(fc.constantFrom(...compareOps), operand, operand).map(([op, l, r]) => ast.compare(op, l, r));

const inOf = (t: ValueType): fc.Arbitrary<Expr> =>
  fc
    .tuple(
      withNull(leafOf[t]),
      fc.array(
        fc.oneof({ weight: 6, arbitrary: literalOf[t] }, { weight: 1, arbitrary: fc.constant(ast.null()) }),
        {
          minLength: 1,
          maxLength: 3,
        },
      ),
      fc.boolean(),
    )
    .map(([operand, values, negated]) => ast.in(operand, values, negated));

/** Well-typed conditions over TABLE_COLUMNS (analyze finds no problem in them). */
export const conditionArbitrary: fc.Arbitrary<Expr> = fc
  .letrec<{ cond: Expr; bool: Expr }>((tie) => ({
    cond: fc.oneof(
      { maxDepth: 4, depthIdentifier: 'policy' },
      withNull(leafOf.boolean),
      compareOf(withNull(leafOf.number)),
      compareOf(withNull(leafOf.text)),
      compareOf(tie('bool')),
      fc
        .tuple(withNull(fc.oneof(leafOf.number, leafOf.text, leafOf.boolean)), fc.boolean())
        .map(([o, n]) => ast.isNull(o, n)),
      inOf('number'),
      inOf('text'),
      inOf('boolean'),
      tie('cond').map((e) => ast.not(e)),
      fc.array(tie('cond'), { minLength: 2, maxLength: 3 }).map((es) => ast.and(es)),
      fc.array(tie('cond'), { minLength: 2, maxLength: 3 }).map((es) => ast.or(es)),
    ),
    bool: fc.oneof({ maxDepth: 4, depthIdentifier: 'policy' }, withNull(leafOf.boolean), tie('cond')),
  }))
  .cond.filter((e) => analyze(e, TABLE_COLUMNS).problems.length === 0);
