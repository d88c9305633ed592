// Static analysis of a policy expression: the columns it names (its own table's and, through
// subqueries, other tables'), whether it depends on the row, its types (compiler/semantics.ts) and
// the obvious mistakes, reported as data with positions.

import {
  visit,
  type ColumnRef,
  type CompareNode,
  type Expr,
  type Position,
  type SubqueryNode,
} from '../grammar/ast.js';
import { RestError } from '../errors/rest-error.js';
import { enterScope, outerScope, resolveColumn, type RelationContext, type Scope } from './scope.js';
import { staticTypeOfColumn, usableText, type ClaimTarget, type StaticType } from './semantics.js';
import type { ColumnTypes } from './types.js';

export interface PolicyProblem {
  readonly message: string;
  readonly pos: Position;
}

export interface Analysis {
  /** Distinct columns of the policy's own table, in order of first appearance. */
  readonly columns: readonly string[];
  /**
   * Every table a subquery reads, in order of first appearance, with the distinct columns of it
   * the expression names (a table read by `exists` without naming a column has none).
   */
  readonly relations: ReadonlyMap<string, readonly string[]>;
  /** Columns named that the table lacks (only when column types are given). */
  readonly missingColumns: readonly string[];
  /**
   * Each of `missingColumns` where it is first named, `<table>.<col>` inside a subquery included:
   * what validation refuses in a policy for one table (one for `all` is checked per table).
   */
  readonly missingAt: readonly PolicyProblem[];
  /** True when the expression reads no column and no table: it is decided from auth_user alone. */
  readonly authOnly: boolean;
  /** The top-level AND conjuncts that read no column: decided in-process, before any SQL. */
  readonly authParts: readonly Expr[];
  /** The top-level AND conjuncts that read the row: they become the WHERE predicate. */
  readonly rowParts: readonly Expr[];
  readonly problems: readonly PolicyProblem[];
}

/** The operands of a top-level AND, nested ANDs flattened; any other expression is its own. */
export const conjuncts = (e: Expr): readonly Expr[] =>
  e.kind === 'and' ? e.operands.flatMap(conjuncts) : [e];

/** Whether `e` reads a column or another table (a subquery) anywhere. */
export function readsRow(e: Expr): boolean {
  return visit<boolean>(e, {
    anyone: () => false,
    or: (n) => n.operands.some(readsRow),
    and: (n) => n.operands.some(readsRow),
    not: (n) => readsRow(n.operand),
    compare: (n) => readsRow(n.left) || readsRow(n.right),
    is_null: (n) => readsRow(n.operand),
    in: (n) => readsRow(n.operand),
    column: () => true,
    qualified_column: () => true,
    exists: () => true,
    in_select: () => true,
    auth: () => false,
    claim: () => false,
    literal: () => false,
  });
}

/**
 * Whether subquery `n`, written in `scope`, names a column of an enclosing row — the policy's own
 * row or an enclosing subquery's — in its selected column, its condition or any subquery nested
 * in it: a correlated subquery. A qualifier that names no table in scope counts as enclosing.
 */
export function isCorrelated(n: SubqueryNode, scope: Scope): boolean {
  const level = scope.length;
  const outside = (ref: ColumnRef, at: Scope): boolean => {
    const r = resolveColumn(at, ref);
    return r === undefined || r.level < level;
  };
  const body = (s: SubqueryNode, at: Scope): boolean => {
    const inner = enterScope(at, s.from.name, {});
    return (s.kind === 'in_select' && outside(s.column, inner)) || refers(s.where, inner);
  };
  const refers = (e: Expr, at: Scope): boolean =>
    visit<boolean>(e, {
      anyone: () => false,
      or: (x) => x.operands.some((o) => refers(o, at)),
      and: (x) => x.operands.some((o) => refers(o, at)),
      not: (x) => refers(x.operand, at),
      compare: (x) => refers(x.left, at) || refers(x.right, at),
      is_null: (x) => refers(x.operand, at),
      in: (x) => refers(x.operand, at),
      column: (x) => outside(x, at),
      qualified_column: (x) => outside(x, at),
      exists: (x) => body(x, at),
      in_select: (x) => refers(x.operand, at) || body(x, at),
      auth: () => false,
      claim: () => false,
      literal: () => false,
    });
  return body(n, scope);
}

/** The tables in scope; a map of column types is the policy's own table alone. */
export type ScopeLike = Scope | ColumnTypes | undefined;
const asScope = (s: ScopeLike): Scope =>
  Array.isArray(s) ? (s as Scope) : outerScope(s as ColumnTypes | undefined);

function typeOfColumn(ref: ColumnRef, scope: Scope): StaticType {
  const t = resolveColumn(scope, ref)?.type;
  return t === undefined ? 'unknown' : staticTypeOfColumn[t];
}

/** The static type of an expression; columns whose type is not known are `unknown`. */
export function typeOf(e: Expr, columns: ScopeLike): StaticType {
  const scope = asScope(columns);
  return visit<StaticType>(e, {
    anyone: () => 'boolean',
    or: () => 'boolean',
    and: () => 'boolean',
    not: () => 'boolean',
    compare: () => 'boolean',
    is_null: () => 'boolean',
    in: () => 'boolean',
    exists: () => 'boolean',
    in_select: () => 'boolean',
    column: (n) => typeOfColumn(n, scope),
    qualified_column: (n) => typeOfColumn(n, scope),
    auth: (n) => (n.attr === 'id' ? 'number' : n.attr === 'username' ? 'text' : 'boolean'),
    claim: () => 'claim',
    literal: (n) =>
      n.type === 'integer' || n.type === 'decimal' ? 'number' : n.type === 'string' ? 'text' : n.type,
  });
}

/** What a claim on one side of a comparison is coerced to, given the other side's type. */
export function claimTargetFor(other: StaticType): ClaimTarget {
  return other === 'number' || other === 'boolean' ? other : 'text';
}

/** For `compare`: the claim target of each side (undefined when that side is not a claim). */
export function compareClaimTargets(
  n: Pick<CompareNode, 'left' | 'right'>,
  columns: ScopeLike,
): { left: ClaimTarget | undefined; right: ClaimTarget | undefined } {
  const l = typeOf(n.left, columns);
  const r = typeOf(n.right, columns);
  return {
    left: l === 'claim' ? claimTargetFor(r) : undefined,
    right: r === 'claim' ? claimTargetFor(l) : undefined,
  };
}

const CONDITION_TYPES: ReadonlySet<StaticType> = new Set(['boolean', 'null', 'claim', 'unknown']);
const ANY_TYPES: ReadonlySet<StaticType> = new Set(['null', 'claim', 'unknown']);

const describeType = (t: StaticType): string =>
  t === 'other' ? 'a value of another type' : t === 'null' ? 'null' : `a ${t}`;

/**
 * Analyses `expr` as a policy on a table with `columns`. With `context`, subqueries are checked
 * against `context.schema` (unknown tables and columns are problems) and `<table>.<col>` outside
 * any subquery must name `context.table`. Columns of the policy's own table that it lacks are
 * `missingColumns`, not problems: a policy for `all` is checked per table at request time.
 */
export function analyze(expr: Expr, columns?: ColumnTypes, context: RelationContext = {}): Analysis {
  const named: string[] = [];
  /** Where each column of the policy's own table is first named. */
  const namedAt = new Map<string, Position>();
  const relations = new Map<string, string[]>();
  const problems: PolicyProblem[] = [];
  const problem = (message: string, pos: Position): void => void problems.push({ message, pos });
  const top = outerScope(columns, context);
  const outerColumns = top[0]?.columns;

  const condition = (e: Expr, scope: Scope): void => {
    const t = typeOf(e, scope);
    if (!CONDITION_TYPES.has(t)) problem(`expected a condition, found ${describeType(t)}`, e.pos);
    walk(e, scope);
  };
  const comparable = (a: StaticType, b: StaticType, pos: Position, what: string): void => {
    if (a === 'other' || b === 'other') {
      problem(`${what} needs values of type number, text or boolean; use 'is null' for other columns`, pos);
    } else if (a !== b && !ANY_TYPES.has(a) && !ANY_TYPES.has(b)) {
      problem(`cannot compare ${describeType(a)} with ${describeType(b)}`, pos);
    }
  };
  const sameColumn = (a: Expr, b: Expr, scope: Scope): string | undefined => {
    if (
      (a.kind !== 'column' && a.kind !== 'qualified_column') ||
      (b.kind !== 'column' && b.kind !== 'qualified_column')
    ) {
      return undefined;
    }
    const x = resolveColumn(scope, a);
    const y = resolveColumn(scope, b);
    return x !== undefined && y !== undefined && x.level === y.level && x.name === y.name
      ? x.name
      : undefined;
  };
  const column = (ref: ColumnRef, scope: Scope): void => {
    const at = resolveColumn(scope, ref);
    if (at === undefined) {
      const table = ref.kind === 'qualified_column' ? ref.table : '';
      problem(`table '${table}' is neither the policy's table nor that of an enclosing subquery`, ref.pos);
      return;
    }
    if (at.level === 0) {
      if (!named.includes(at.name)) named.push(at.name);
      if (!namedAt.has(at.name)) namedAt.set(at.name, ref.pos);
      return;
    }
    const table = at.table ?? '';
    const list = relations.get(table) ?? [];
    if (!list.includes(at.name)) list.push(at.name);
    relations.set(table, list);
    if (scope[at.level]?.columns !== undefined && at.type === undefined) {
      problem(`column '${at.name}' does not exist in table '${table}'`, ref.pos);
    }
  };
  const subquery = (table: string, tablePos: Position, scope: Scope): Scope => {
    if (!relations.has(table)) relations.set(table, []);
    if (context.schema !== undefined && !context.schema.has(table))
      problem(`table '${table}' does not exist`, tablePos);
    return enterScope(scope, table, context);
  };
  const walk = (e: Expr, scope: Scope): void =>
    visit<void>(e, {
      anyone: () => {},
      or: (n) => n.operands.forEach((o) => condition(o, scope)),
      and: (n) => n.operands.forEach((o) => condition(o, scope)),
      not: (n) => condition(n.operand, scope),
      compare: (n) => {
        const same = sameColumn(n.left, n.right, scope);
        if (same !== undefined) problem(`compares column '${same}' with itself`, n.pos);
        comparable(typeOf(n.left, scope), typeOf(n.right, scope), n.pos, `'${n.op}'`);
        walk(n.left, scope);
        walk(n.right, scope);
      },
      is_null: (n) => walk(n.operand, scope),
      in: (n) => {
        const t = typeOf(n.operand, scope);
        for (const v of n.values) comparable(t, typeOf(v, scope), v.pos, "'in'");
        const typed = n.values.filter((v) => v.type !== 'null');
        const first = typed[0];
        for (const v of typed) {
          if (first !== undefined && typeOf(v, scope) !== typeOf(first, scope)) {
            problem(
              `the values of 'in' must be of one type: ${describeType(typeOf(first, scope))} and ${describeType(typeOf(v, scope))}`,
              v.pos,
            );
          }
        }
        walk(n.operand, scope);
        n.values.forEach((v) => walk(v, scope));
      },
      exists: (n) => {
        const inner = subquery(n.from.name, n.from.pos, scope);
        if (n.where.kind !== 'anyone') condition(n.where, inner);
      },
      in_select: (n) => {
        walk(n.operand, scope);
        const inner = subquery(n.from.name, n.from.pos, scope);
        column(n.column, inner);
        comparable(typeOf(n.operand, scope), typeOf(n.column, inner), n.pos, "'in'");
        if (n.where.kind !== 'anyone') condition(n.where, inner);
      },
      column: (n) => column(n, scope),
      qualified_column: (n) => column(n, scope),
      auth: () => {},
      claim: () => {},
      literal: (n) => {
        // Beyond 2^53 a JavaScript number is not the integer written, and beyond 2^63 no database can bind it.
        if (n.type === 'integer' && !Number.isSafeInteger(n.value)) {
          problem(
            `integer ${String(n.value)} is out of range (at most ${Number.MAX_SAFE_INTEGER} in size)`,
            n.pos,
          );
        }
        if (n.type === 'string' && usableText(n.value) === null) {
          problem('string holds a character no database can store (NUL or a lone surrogate)', n.pos);
        }
      },
    });

  if (expr.kind !== 'anyone') condition(expr, top);
  const missingColumns = outerColumns === undefined ? [] : named.filter((c) => !outerColumns.has(c));
  const ownTable = context.table === undefined ? "the policy's table" : `table '${context.table}'`;
  return Object.freeze({
    columns: Object.freeze([...named]),
    relations: new Map([...relations].map(([t, cs]) => [t, Object.freeze(cs)] as const)),
    missingColumns: Object.freeze(missingColumns),
    missingAt: Object.freeze(
      missingColumns.map((c) => ({
        message: `column '${c}' does not exist in ${ownTable}`,
        pos: namedAt.get(c) ?? expr.pos,
      })),
    ),
    authOnly: named.length === 0 && relations.size === 0,
    authParts: Object.freeze(conjuncts(expr).filter((e) => !readsRow(e))),
    rowParts: Object.freeze(conjuncts(expr).filter(readsRow)),
    problems: Object.freeze(problems),
  });
}

/** The validation error of a problem (400 `invalid_policy`), located in the expression. */
export function policyProblemError(problem: PolicyProblem): RestError {
  const { line, column } = problem.pos;
  return new RestError('invalid_policy', `${problem.message} at ${line}:${column}`, {
    details: { line, column },
  });
}
