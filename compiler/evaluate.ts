// In-process evaluation with SQL's three-valued logic (compiler/semantics.ts), compiled once into
// closures: exactly on a whole row (create/update checks), or over every possible row with only
// auth_user known (request decisions), as the set of outcomes the row could still produce.
// A subquery reads rows this module never sees: it yields every outcome those rows could give,
// narrowed by what auth_user alone decides of its where clause and of the inner table's own read
// policy (`innerCondition`): a subquery no row can satisfy is empty, so `exists` is FALSE,
// `x in (…)` FALSE and `x not in (…)` TRUE — even for a NULL x, as in SQL.

import { visit, type ColumnRef, type CompareOp, type Expr } from '../grammar/ast.js';
import { claimTargetFor, compareClaimTargets, typeOf } from './analyze.js';
import type { ColumnTypes } from './types.js';
import { enterScope, outerScope, resolveColumn, type RelationContext, type Scope } from './scope.js';
import {
  claimValue,
  coerceClaim,
  compareValues,
  normaliseColumnValue,
  usableText,
  type ClaimTarget,
  type Value,
} from './semantics.js';
import type { AuthUser } from './types.js';

/** A value not known until the row is: a column, or a condition that reads one. */
export const ROW_DEPENDENT: unique symbol = Symbol('row-dependent');
type Partial = Value | typeof ROW_DEPENDENT;

/** A set of truth values as a bit mask: what a condition can yield. */
export type Outcomes = number;
export const TRUE: Outcomes = 1;
export const FALSE: Outcomes = 2;
export const UNKNOWN: Outcomes = 4;
const ANY: Outcomes = TRUE | FALSE | UNKNOWN;

const outcomeOf = (v: boolean | null): Outcomes => (v === null ? UNKNOWN : v ? TRUE : FALSE);
const TRUTHS: readonly (boolean | null)[] = [true, false, null];

/** Applies a Kleene operator to every pair of possible operands. */
function combine(
  a: Outcomes,
  b: Outcomes,
  op: (x: boolean | null, y: boolean | null) => boolean | null,
): Outcomes {
  let out = 0;
  for (const x of TRUTHS) {
    if ((a & outcomeOf(x)) === 0) continue;
    for (const y of TRUTHS) if ((b & outcomeOf(y)) !== 0) out |= outcomeOf(op(x, y));
  }
  return out;
}
const kleeneAnd = (x: boolean | null, y: boolean | null): boolean | null =>
  x === false || y === false ? false : x === null || y === null ? null : true;
const kleeneOr = (x: boolean | null, y: boolean | null): boolean | null =>
  x === true || y === true ? true : x === null || y === null ? null : false;
const negate = (a: Outcomes): Outcomes =>
  ((a & TRUE) !== 0 ? FALSE : 0) | ((a & FALSE) !== 0 ? TRUE : 0) | (a & UNKNOWN);

/** The single value of a set, or ROW_DEPENDENT when the row decides. */
function valueOfOutcomes(o: Outcomes): Partial {
  if (o === TRUE) return true;
  if (o === FALSE) return false;
  if (o === UNKNOWN) return null;
  return ROW_DEPENDENT;
}

export interface EvalContext {
  readonly user: AuthUser;
  /** A column's value; ROW_DEPENDENT when deciding for every row. */
  readonly column: (name: string) => Value | typeof ROW_DEPENDENT;
}

export type CompiledCondition = (ctx: EvalContext) => Outcomes;
type CompiledValue = (ctx: EvalContext) => Partial;

function compareResult(op: CompareOp, a: Value, b: Value): boolean | null {
  if (a === null || b === null) return null;
  const c = compareValues(a, b);
  switch (op) {
    case '=':
      return c === 0;
    case '!=':
      return c !== 0;
    case '<':
      return c < 0;
    case '<=':
      return c <= 0;
    case '>':
      return c > 0;
    case '>=':
      return c >= 0;
  }
}

export interface EvalRelations extends RelationContext {
  /**
   * The inner table's own read policy for the request's user, compiled on that table; undefined
   * when not known (then it could let any row through).
   */
  readonly innerCondition?: (table: string) => CompiledCondition | undefined;
}

const EVERY_ROW = (): typeof ROW_DEPENDENT => ROW_DEPENDENT;

/** Compiles `expr` (a condition) once; the closure is what requests run. */
export function compileCondition(
  expr: Expr,
  columns?: ColumnTypes,
  relations: EvalRelations = {},
): CompiledCondition {
  /** The policy's own row is the context's; an inner table's rows are not known here. */
  const columnValue = (ref: ColumnRef, scope: Scope): CompiledValue => {
    const at = resolveColumn(scope, ref);
    if (at === undefined || at.level > 0) return () => ROW_DEPENDENT;
    const name = at.name;
    return (ctx) => ctx.column(name);
  };

  /** What the rows of a subquery's table could make of its where clause and its read policy. */
  const mayMatch = (table: string, where: Expr, scope: Scope): ((ctx: EvalContext) => boolean) => {
    const inner = enterScope(scope, table, relations);
    const filter = condition(where, inner);
    const policy =
      relations.innerCondition === undefined ? undefined : (relations.innerCondition(table) ?? (() => FALSE));
    return (ctx) => {
      const own = policy === undefined ? ANY : policy({ user: ctx.user, column: EVERY_ROW });
      return (combine(filter(ctx), own, kleeneAnd) & TRUE) !== 0;
    };
  };

  const value = (e: Expr, target: ClaimTarget, scope: Scope): CompiledValue => {
    if (e.kind === 'claim') {
      const name = e.name;
      return (ctx) => coerceClaim(claimValue(ctx.user.claims, name), target);
    }
    const conditionValue = (c: Expr): CompiledValue => {
      const compiled = condition(c, scope);
      return (ctx) => valueOfOutcomes(compiled(ctx));
    };
    return visit<CompiledValue>(e, {
      anyone: () => () => true,
      or: conditionValue,
      and: conditionValue,
      not: conditionValue,
      compare: conditionValue,
      is_null: conditionValue,
      in: conditionValue,
      exists: conditionValue,
      in_select: conditionValue,
      column: (n) => columnValue(n, scope),
      qualified_column: (n) => columnValue(n, scope),
      auth: (n) => {
        switch (n.attr) {
          case 'id':
            return (ctx) => ctx.user.id;
          case 'username':
            return (ctx) => usableText(ctx.user.username);
          case 'is_admin':
            return (ctx) => ctx.user.is_admin;
          case 'is_authenticated':
            return (ctx) => ctx.user.is_authenticated;
        }
      },
      claim: () => {
        throw new Error('unreachable: claims are handled above');
      },
      literal: (n) => () => n.value,
    });
  };

  /** A value used where a truth value is expected (a boolean column, a claim, a literal). */
  const truthOf =
    (v: CompiledValue): CompiledCondition =>
    (ctx) => {
      const x = v(ctx);
      if (x === ROW_DEPENDENT) return ANY;
      return outcomeOf(
        typeof x === 'boolean' || x === null ? x : (normaliseColumnValue(x, 'boolean') as boolean | null),
      );
    };

  const condition = (e: Expr, scope: Scope): CompiledCondition =>
    visit<CompiledCondition>(e, {
      anyone: () => () => TRUE,
      or: (n) => {
        const parts = n.operands.map((o) => condition(o, scope));
        return (ctx) =>
          parts.reduce((acc, p) => (acc === TRUE ? acc : combine(acc, p(ctx), kleeneOr)), FALSE);
      },
      and: (n) => {
        const parts = n.operands.map((o) => condition(o, scope));
        return (ctx) =>
          parts.reduce((acc, p) => (acc === FALSE ? acc : combine(acc, p(ctx), kleeneAnd)), TRUE);
      },
      not: (n) => {
        const inner = condition(n.operand, scope);
        return (ctx) => negate(inner(ctx));
      },
      compare: (n) => {
        const targets = compareClaimTargets(n, scope);
        const left = value(n.left, targets.left ?? 'text', scope);
        const right = value(n.right, targets.right ?? 'text', scope);
        const op = n.op;
        return (ctx) => {
          const l = left(ctx);
          const r = right(ctx);
          if (l === null || r === null) return UNKNOWN;
          if (l === ROW_DEPENDENT || r === ROW_DEPENDENT) return ANY;
          return outcomeOf(compareResult(op, l, r));
        };
      },
      is_null: (n) => {
        const operand = n.operand;
        const negated = n.negated;
        if (operand.kind === 'claim') {
          return (ctx) => outcomeOf((claimValue(ctx.user.claims, operand.name) === null) !== negated);
        }
        const v = value(operand, 'text', scope);
        return (ctx) => {
          const x = v(ctx);
          return x === ROW_DEPENDENT ? TRUE | FALSE : outcomeOf((x === null) !== negated);
        };
      },
      in: (n) => {
        const firstTyped = n.values.find((l) => l.type !== 'null');
        const v = value(
          n.operand,
          claimTargetFor(firstTyped === undefined ? 'null' : typeOf(firstTyped, scope)),
          scope,
        );
        const literals = n.values.map((l) => l.value);
        const hasNull = literals.includes(null);
        const negated = n.negated;
        // With the operand unknown: found → TRUE, not found → FALSE (or NULL when the list has one).
        const whenRowDecides = (hasNull ? TRUE | UNKNOWN : ANY) as Outcomes;
        return (ctx) => {
          const x = v(ctx);
          if (x === null) return UNKNOWN;
          if (x === ROW_DEPENDENT) return negated ? negate(whenRowDecides) : whenRowDecides;
          let found: boolean | null = false;
          for (const l of literals) {
            const r = compareResult('=', x, l);
            if (r === true) {
              found = true;
              break;
            }
            if (r === null) found = null;
          }
          return outcomeOf(found === null ? null : found !== negated);
        };
      },
      exists: (n) => {
        const may = mayMatch(n.from.name, n.where, scope);
        return (ctx) => (may(ctx) ? TRUE | FALSE : FALSE);
      },
      in_select: (n) => {
        const may = mayMatch(n.from.name, n.where, scope);
        const target = claimTargetFor(typeOf(n.column, enterScope(scope, n.from.name, relations)));
        const v = value(n.operand, target, scope);
        const negated = n.negated;
        return (ctx) => {
          // No row can be selected: IN of an empty set is FALSE, NOT IN TRUE, whatever the operand.
          if (!may(ctx)) return negated ? TRUE : FALSE;
          // Rows decide; a NULL operand is never found (NULL if any row, FALSE if none).
          const found = v(ctx) === null ? FALSE | UNKNOWN : ANY;
          return negated ? negate(found) : found;
        };
      },
      column: (n) => truthOf(value(n, 'boolean', scope)),
      qualified_column: (n) => truthOf(value(n, 'boolean', scope)),
      auth: (n) => truthOf(value(n, 'boolean', scope)),
      claim: (n) => truthOf(value(n, 'boolean', scope)),
      literal: (n) => truthOf(value(n, 'boolean', scope)),
    });

  return condition(expr, outerScope(columns, relations));
}

/** Reads a row's values as the database compares them. */
export function rowReader(
  row: Readonly<Record<string, unknown>>,
  columns: ColumnTypes | undefined,
): (name: string) => Value {
  return (name) => normaliseColumnValue(Object.hasOwn(row, name) ? row[name] : null, columns?.get(name));
}

/**
 * TRUE, FALSE or NULL (unknown) on one row; allowed iff TRUE. `undefined` when the answer depends
 * on rows of other tables (a subquery): only the database can judge it.
 */
export type RowVerdict = boolean | null | undefined;

/** Exactly on one row (see RowVerdict). */
export function evaluateCompiled(
  condition: CompiledCondition,
  user: AuthUser,
  row: Readonly<Record<string, unknown>>,
  columns: ColumnTypes | undefined,
): RowVerdict {
  const o = condition({ user, column: rowReader(row, columns) });
  return o === TRUE ? true : o === FALSE ? false : o === UNKNOWN ? null : undefined;
}

/** What `user` alone makes of the condition, for every row it could be applied to. */
export function outcomesForUser(condition: CompiledCondition, user: AuthUser): Outcomes {
  return condition({ user, column: EVERY_ROW });
}

/**
 * Evaluates `expr` on a row with SQL's three-valued logic: TRUE, FALSE or NULL (unknown).
 * Allowed iff TRUE. Columns absent from `row` are NULL. `undefined` when rows of another table
 * (a subquery) decide.
 */
export function evaluate(
  expr: Expr,
  user: AuthUser,
  row: Readonly<Record<string, unknown>> = {},
  columns?: ColumnTypes,
  relations?: EvalRelations,
): RowVerdict {
  return evaluateCompiled(compileCondition(expr, columns, relations), user, row, columns);
}
