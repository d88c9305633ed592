// fast-check arbitraries of policy ASTs with relations (docs/policy-language.md): `exists (select from …)`,
// `x [not] in (select c from t [where …])` nested at most two levels, and qualified columns.
// Positions are left at NO_POSITION; compare with stripPositions.

import fc from 'fast-check';
import { ast, type ColumnRef, type Expr } from '../../grammar/ast.js';
import { MAX_SUBQUERY_DEPTH } from '../../grammar/cst-to-ast.js';
import {
  columnNameArbitrary,
  COMPARE_OPS,
  exprArbitrary,
  type ExprArbitraryOptions,
} from './policy-arbitraries.js';

export interface RelationArbitraryOptions extends ExprArbitraryOptions {
  /** Table names to draw from; default: any name. */
  readonly tables?: readonly string[];
}

const tableNameArbitrary = (options: RelationArbitraryOptions): fc.Arbitrary<string> =>
  options.tables === undefined ? columnNameArbitrary() : fc.constantFrom(...options.tables);

export const columnRefArbitrary = (options: RelationArbitraryOptions = {}): fc.Arbitrary<ColumnRef> => {
  const names = options.columns === undefined ? columnNameArbitrary() : fc.constantFrom(...options.columns);
  return fc.oneof(
    names.map((n) => ast.column(n)),
    fc.tuple(tableNameArbitrary(options), names).map(([t, n]) => ast.qualifiedColumn(t, n)),
  );
};

/** Expressions with subqueries at most `depth` levels deep (the grammar's limit by default). */
export function relationExprArbitrary(
  options: RelationArbitraryOptions = {},
  depth: number = MAX_SUBQUERY_DEPTH,
): fc.Arbitrary<Expr> {
  const plain = exprArbitrary({
    ...options,
    ...(options.columns === undefined ? {} : { columns: options.columns }),
  });
  const refs = columnRefArbitrary(options);
  const tables = tableNameArbitrary(options);
  const qualifiedCompare = fc
    .tuple(fc.constantFrom(...COMPARE_OPS), refs, fc.oneof(refs, plain))
    .map(([op, l, r]) => ast.compare(op, l, r));
  if (depth === 0)
    return fc.oneof({ weight: 3, arbitrary: plain }, { weight: 1, arbitrary: qualifiedCompare });
  const inner = relationExprArbitrary(options, depth - 1);
  const exists = fc.tuple(tables, inner).map(([t, w]) => ast.exists(t, w));
  const inSelect = fc
    .tuple(plain, refs, tables, fc.option(inner, { nil: undefined }), fc.boolean())
    .map(([o, c, t, w, n]) => ast.inSelect(o, c, t, w ?? ast.anyone(), n));
  const subquery = fc.oneof(exists, inSelect);
  return fc.oneof(
    { weight: 2, arbitrary: plain },
    { weight: 1, arbitrary: qualifiedCompare },
    { weight: 3, arbitrary: subquery },
    { weight: 1, arbitrary: subquery.map((e) => ast.not(e)) },
    { weight: 1, arbitrary: fc.tuple(subquery, plain).map(([a, b]) => ast.and([a, b])) },
    { weight: 1, arbitrary: fc.tuple(plain, subquery).map(([a, b]) => ast.or([a, b])) },
    { weight: 1, arbitrary: subquery.map((e) => ast.compare('=', e, ast.boolean(true))) },
  );
}
