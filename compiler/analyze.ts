// Static analysis of a policy expression: the columns it names, whether it depends on the row,
// its types (compiler/semantics.ts) and the obvious mistakes, reported as data with positions.

import { visit, type CompareNode, type Expr, type Position } from '../grammar/ast.js';
import { RestError } from '../errors/rest-error.js';
import { staticTypeOfColumn, usableText, type ClaimTarget, type StaticType } from './semantics.js';
import type { ColumnType } from './types.js';

export type ColumnTypes = ReadonlyMap<string, ColumnType>;

export interface PolicyProblem {
  readonly message: string;
  readonly pos: Position;
}

export interface Analysis {
  /** Distinct columns in order of first appearance. */
  readonly columns: readonly string[];
  /** Columns named that the table lacks (only when column types are given). */
  readonly missingColumns: readonly string[];
  /** True when the expression reads no column: it is decided from auth_user alone. */
  readonly authOnly: boolean;
  /** The top-level AND conjuncts that read no column: decided in-process, before any SQL. */
  readonly authParts: readonly Expr[];
  /** The top-level AND conjuncts that read the row: they become the WHERE predicate. */
  readonly rowParts: readonly Expr[];
  readonly problems: readonly PolicyProblem[];
}

/** The operands of a top-level AND, nested ANDs flattened; any other expression is its own. */
export const conjuncts = (e: Expr): readonly Expr[] => (e.kind === 'and' ? e.operands.flatMap(conjuncts) : [e]);

/** Whether `e` reads a column anywhere. */
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
    auth: () => false,
    claim: () => false,
    literal: () => false,
  });
}

/** The static type of an expression; columns not in `columns` are `unknown`. */
export function typeOf(e: Expr, columns: ColumnTypes | undefined): StaticType {
  return visit<StaticType>(e, {
    anyone: () => 'boolean',
    or: () => 'boolean',
    and: () => 'boolean',
    not: () => 'boolean',
    compare: () => 'boolean',
    is_null: () => 'boolean',
    in: () => 'boolean',
    column: (n) => {
      const t = columns?.get(n.name);
      return t === undefined ? 'unknown' : staticTypeOfColumn[t];
    },
    auth: (n) => (n.attr === 'id' ? 'number' : n.attr === 'username' ? 'text' : 'boolean'),
    claim: () => 'claim',
    literal: (n) => (n.type === 'integer' || n.type === 'decimal' ? 'number' : n.type === 'string' ? 'text' : n.type),
  });
}

/** What a claim on one side of a comparison is coerced to, given the other side's type. */
export function claimTargetFor(other: StaticType): ClaimTarget {
  return other === 'number' || other === 'boolean' ? other : 'text';
}

/** For `compare`: the claim target of each side (undefined when that side is not a claim). */
export function compareClaimTargets(
  n: Pick<CompareNode, 'left' | 'right'>,
  columns: ColumnTypes | undefined,
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

const describeType = (t: StaticType): string => (t === 'other' ? 'a value of another type' : t === 'null' ? 'null' : `a ${t}`);

export function analyze(expr: Expr, columns?: ColumnTypes): Analysis {
  const named: string[] = [];
  const problems: PolicyProblem[] = [];
  const problem = (message: string, pos: Position): void => void problems.push({ message, pos });

  const condition = (e: Expr): void => {
    const t = typeOf(e, columns);
    if (!CONDITION_TYPES.has(t)) problem(`expected a condition, found ${describeType(t)}`, e.pos);
    walk(e);
  };
  const comparable = (a: StaticType, b: StaticType, pos: Position, what: string): void => {
    if (a === 'other' || b === 'other') {
      problem(`${what} needs values of type number, text or boolean; use 'is null' for other columns`, pos);
    } else if (a !== b && !ANY_TYPES.has(a) && !ANY_TYPES.has(b)) {
      problem(`cannot compare ${describeType(a)} with ${describeType(b)}`, pos);
    }
  };
  const walk = (e: Expr): void =>
    visit<void>(e, {
      anyone: () => {},
      or: (n) => n.operands.forEach(condition),
      and: (n) => n.operands.forEach(condition),
      not: (n) => condition(n.operand),
      compare: (n) => {
        if (n.left.kind === 'column' && n.right.kind === 'column' && n.left.name === n.right.name) {
          problem(`compares column '${n.left.name}' with itself`, n.pos);
        }
        comparable(typeOf(n.left, columns), typeOf(n.right, columns), n.pos, `'${n.op}'`);
        walk(n.left);
        walk(n.right);
      },
      is_null: (n) => walk(n.operand),
      in: (n) => {
        const t = typeOf(n.operand, columns);
        for (const v of n.values) comparable(t, typeOf(v, columns), v.pos, "'in'");
        const typed = n.values.filter((v) => v.type !== 'null');
        const first = typed[0];
        for (const v of typed) {
          if (first !== undefined && typeOf(v, columns) !== typeOf(first, columns)) {
            problem(`the values of 'in' must be of one type: ${describeType(typeOf(first, columns))} and ${describeType(typeOf(v, columns))}`, v.pos);
          }
        }
        walk(n.operand);
        n.values.forEach(walk);
      },
      column: (n) => {
        if (!named.includes(n.name)) named.push(n.name);
      },
      auth: () => {},
      claim: () => {},
      literal: (n) => {
        // Beyond 2^53 a JavaScript number is not the integer written, and beyond 2^63 no database can bind it.
        if (n.type === 'integer' && !Number.isSafeInteger(n.value)) {
          problem(`integer ${String(n.value)} is out of range (at most ${Number.MAX_SAFE_INTEGER} in size)`, n.pos);
        }
        if (n.type === 'string' && usableText(n.value) === null) {
          problem('string holds a character no database can store (NUL or a lone surrogate)', n.pos);
        }
      },
    });

  if (expr.kind !== 'anyone') condition(expr);
  return Object.freeze({
    columns: Object.freeze([...named]),
    missingColumns: Object.freeze(columns === undefined ? [] : named.filter((c) => !columns.has(c))),
    authOnly: named.length === 0,
    authParts: Object.freeze(conjuncts(expr).filter((e) => !readsRow(e))),
    rowParts: Object.freeze(conjuncts(expr).filter(readsRow)),
    problems: Object.freeze(problems),
  });
}

/** The validation error of a problem (400 `invalid_policy`), located in the expression. */
export function policyProblemError(problem: PolicyProblem): RestError {
  const { line, column } = problem.pos;
  return new RestError('invalid_input', 'invalid_policy', `${problem.message} at ${line}:${column}`, {
    details: { line, column },
  });
}
