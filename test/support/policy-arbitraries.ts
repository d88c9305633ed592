// fast-check arbitraries of well-formed policy ASTs (positions left at NO_POSITION), and
// stripPositions to compare ASTs without them. Shared by grammar and compiler property tests.

import fc from 'fast-check';
import { ast, type AuthAttribute, type CompareOp, type Expr, type LiteralNode } from '../../grammar/ast.js';
import { POLICY_KEYWORDS } from '../../grammar/print-policy.js';

export const AUTH_ATTRIBUTES: readonly AuthAttribute[] = ['id', 'username', 'is_admin', 'is_authenticated'];
export const COMPARE_OPS: readonly CompareOp[] = ['=', '!=', '<', '<=', '>', '>='];

/** A bare identifier that is not a keyword, any case. */
export const identifierArbitrary = (): fc.Arbitrary<string> =>
  fc
    .stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,11}$/)
    .filter((s) => !POLICY_KEYWORDS.includes(s.toLowerCase()));

/** Column names, including the ones that need double quotes: keywords, spaces, quotes, any character. */
export const columnNameArbitrary = (): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 4, arbitrary: identifierArbitrary() },
    {
      weight: 1,
      arbitrary: fc.constantFrom('and', 'Or', 'NULL', 'auth_user', 'order', '"', 'a"b', 'two words', '1st'),
    },
    { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 6, unit: 'binary' }) },
  );

/** Claim names: any word, keywords included (`auth_user.claims.in` is a claim called `in`). */
export const claimNameArbitrary = (): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 4, arbitrary: identifierArbitrary() },
    { weight: 1, arbitrary: fc.constantFrom(...POLICY_KEYWORDS, 'IN', 'Null') },
  );

export const literalArbitrary = (): fc.Arbitrary<LiteralNode> =>
  fc.oneof(
    fc
      .oneof(
        fc.integer({ min: -1_000_000, max: 1_000_000 }),
        fc.constantFrom(Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER),
      )
      .map((n) => ast.integer(n)),
    fc
      .tuple(fc.integer({ min: -9_999_999, max: 9_999_999 }), fc.integer({ min: 0, max: 8 }))
      .map(([mantissa, scale]) => ast.decimal(mantissa / 10 ** scale + 0)),
    fc.constantFrom(1e21, 1.5e-7, -2.5e-10, 123456789012345680000).map((d) => ast.decimal(d)),
    fc.string({ maxLength: 6, unit: 'binary' }).map((s) => ast.string(s)),
    fc.constantFrom("it's", "''", '"', '\n', 'and').map((s) => ast.string(s)),
    fc.boolean().map((b) => ast.boolean(b)),
    fc.constant(ast.null()),
  );

export interface ExprArbitraryOptions {
  /** Column names to draw from (e.g. a real table's columns); default: any name. */
  readonly columns?: readonly string[];
  /** Claim names to draw from; default: any word. */
  readonly claims?: readonly string[];
}

/** Well-formed expressions (never `anyone`): every node kind, nested by precedence or not. */
export function exprArbitrary(options: ExprArbitraryOptions = {}): fc.Arbitrary<Expr> {
  const columns = options.columns === undefined ? columnNameArbitrary() : fc.constantFrom(...options.columns);
  const claims = options.claims === undefined ? claimNameArbitrary() : fc.constantFrom(...options.claims);
  const literals = literalArbitrary();
  return fc.letrec<{ expr: Expr; operand: Expr }>((tie) => ({
    operand: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      columns.map((n) => ast.column(n)),
      fc.constantFrom(...AUTH_ATTRIBUTES).map((a) => ast.auth(a)),
      claims.map((n) => ast.claim(n)),
      literals,
      tie('expr'),
    ),
    expr: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      tie('operand'),
      fc
        .tuple(fc.constantFrom(...COMPARE_OPS), tie('operand'), tie('operand'))
        .map(([op, l, r]) => ast.compare(op, l, r)),
      fc.tuple(tie('operand'), fc.boolean()).map(([o, n]) => ast.isNull(o, n)),
      fc
        .tuple(tie('operand'), fc.array(literals, { minLength: 1, maxLength: 3 }), fc.boolean())
        .map(([o, v, n]) => ast.in(o, v, n)),
      tie('expr').map((e) => ast.not(e)),
      fc.array(tie('expr'), { minLength: 2, maxLength: 3 }).map((es) => ast.and(es)),
      fc.array(tie('expr'), { minLength: 2, maxLength: 3 }).map((es) => ast.or(es)),
    ),
  })).expr;
}

/** A whole policy: `anyone` (the empty expression) or an expression. */
export const policyArbitrary = (options: ExprArbitraryOptions = {}): fc.Arbitrary<Expr> =>
  fc.oneof(
    { weight: 1, arbitrary: fc.constant(ast.anyone()) },
    { weight: 9, arbitrary: exprArbitrary(options) },
  );

/** The AST without positions, for comparisons. */
export function stripPositions(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripPositions);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k]) => k !== 'pos')
        .map(([k, v]) => [k, stripPositions(v)]),
    );
  }
  return value;
}
