// In-process evaluation with SQL's three-valued logic (compiler/semantics.ts), compiled once into
// closures: exactly on a whole row (create/update checks), or over every possible row with only
// auth_user known (request decisions), as the set of outcomes the row could still produce.

import { visit, type CompareOp, type Expr } from '../grammar/ast.js';
import { claimTargetFor, compareClaimTargets, typeOf, type ColumnTypes } from './analyze.js';
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
function combine(a: Outcomes, b: Outcomes, op: (x: boolean | null, y: boolean | null) => boolean | null): Outcomes {
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
const negate = (a: Outcomes): Outcomes => ((a & TRUE) !== 0 ? FALSE : 0) | ((a & FALSE) !== 0 ? TRUE : 0) | (a & UNKNOWN);

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

/** Compiles `expr` (a condition) once; the closure is what requests run. */
export function compileCondition(expr: Expr, columns?: ColumnTypes): CompiledCondition {
  const value = (e: Expr, target: ClaimTarget): CompiledValue => {
    if (e.kind === 'claim') {
      const name = e.name;
      return (ctx) => coerceClaim(claimValue(ctx.user.claims, name), target);
    }
    return visit<CompiledValue>(e, {
      anyone: () => () => true,
      or: conditionValue,
      and: conditionValue,
      not: conditionValue,
      compare: conditionValue,
      is_null: conditionValue,
      in: conditionValue,
      column: (n) => (ctx) => ctx.column(n.name),
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

  const conditionValue = (e: Expr): CompiledValue => {
    const c = condition(e);
    return (ctx) => valueOfOutcomes(c(ctx));
  };

  /** A value used where a truth value is expected (a boolean column, a claim, a literal). */
  const truthOf = (v: CompiledValue): CompiledCondition => (ctx) => {
    const x = v(ctx);
    if (x === ROW_DEPENDENT) return ANY;
    return outcomeOf(typeof x === 'boolean' || x === null ? x : (normaliseColumnValue(x, 'boolean') as boolean | null));
  };

  const condition = (e: Expr): CompiledCondition =>
    visit<CompiledCondition>(e, {
      anyone: () => () => TRUE,
      or: (n) => {
        const parts = n.operands.map(condition);
        return (ctx) => parts.reduce((acc, p) => (acc === TRUE ? acc : combine(acc, p(ctx), kleeneOr)), FALSE);
      },
      and: (n) => {
        const parts = n.operands.map(condition);
        return (ctx) => parts.reduce((acc, p) => (acc === FALSE ? acc : combine(acc, p(ctx), kleeneAnd)), TRUE);
      },
      not: (n) => {
        const inner = condition(n.operand);
        return (ctx) => negate(inner(ctx));
      },
      compare: (n) => {
        const targets = compareClaimTargets(n, columns);
        const left = value(n.left, targets.left ?? 'text');
        const right = value(n.right, targets.right ?? 'text');
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
        const v = value(operand, 'text');
        return (ctx) => {
          const x = v(ctx);
          return x === ROW_DEPENDENT ? TRUE | FALSE : outcomeOf((x === null) !== negated);
        };
      },
      in: (n) => {
        const firstTyped = n.values.find((l) => l.type !== 'null');
        const v = value(n.operand, claimTargetFor(firstTyped === undefined ? 'null' : typeOf(firstTyped, columns)));
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
      column: (n) => truthOf(value(n, 'boolean')),
      auth: (n) => truthOf(value(n, 'boolean')),
      claim: (n) => truthOf(value(n, 'boolean')),
      literal: (n) => truthOf(value(n, 'boolean')),
    });

  return condition(expr);
}

/** Reads a row's values as the database compares them. */
export function rowReader(
  row: Readonly<Record<string, unknown>>,
  columns: ColumnTypes | undefined,
): (name: string) => Value {
  return (name) => normaliseColumnValue(Object.hasOwn(row, name) ? row[name] : null, columns?.get(name));
}

const EVERY_ROW = (): typeof ROW_DEPENDENT => ROW_DEPENDENT;

/** Exactly on one row: TRUE, FALSE or NULL (unknown). Allowed iff TRUE. */
export function evaluateCompiled(
  condition: CompiledCondition,
  user: AuthUser,
  row: Readonly<Record<string, unknown>>,
  columns: ColumnTypes | undefined,
): boolean | null {
  const o = condition({ user, column: rowReader(row, columns) });
  return o === TRUE ? true : o === FALSE ? false : null;
}

/** What `user` alone makes of the condition, for every row it could be applied to. */
export function outcomesForUser(condition: CompiledCondition, user: AuthUser): Outcomes {
  return condition({ user, column: EVERY_ROW });
}

/**
 * Evaluates `expr` on a row with SQL's three-valued logic: TRUE, FALSE or NULL (unknown).
 * Allowed iff TRUE. Columns absent from `row` are NULL.
 */
export function evaluate(
  expr: Expr,
  user: AuthUser,
  row: Readonly<Record<string, unknown>> = {},
  columns?: ColumnTypes,
): boolean | null {
  return evaluateCompiled(compileCondition(expr, columns), user, row, columns);
}
