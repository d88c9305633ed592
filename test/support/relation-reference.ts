// A reference evaluator of policies with subqueries over table snapshots, written for the
// differential tests independently of the compiler: SQL's three-valued logic, NULLs in IN and
// NOT IN as SQL has them, and each inner table seen through its own read policy (docs/policy-language.md).

import { compareValues } from '../../compiler/semantics.js';
import type { AuthUser } from '../../compiler/types.js';
import type { ColumnRef, Expr } from '../../grammar/ast.js';

export type Cell = number | string | boolean | null;
export type SnapshotRow = Readonly<Record<string, Cell>>;
export type Snapshot = ReadonlyMap<string, readonly SnapshotRow[]>;

export interface ReferenceWorld {
  readonly tables: Snapshot;
  /** The read policy of a table a subquery reads. */
  readonly readPolicy: (table: string) => Expr;
  readonly user: AuthUser;
}

type Truth = boolean | null;
interface Frame {
  readonly table: string;
  readonly row: SnapshotRow;
}

const and = (a: Truth, b: Truth): Truth =>
  a === false || b === false ? false : a === null || b === null ? null : true;
const or = (a: Truth, b: Truth): Truth =>
  a === true || b === true ? true : a === null || b === null ? null : false;
const not = (a: Truth): Truth => (a === null ? null : !a);

function cmp(op: string, a: Cell, b: Cell): Truth {
  if (a === null || b === null) return null;
  const c = compareValues(a, b);
  return op === '='
    ? c === 0
    : op === '!='
      ? c !== 0
      : op === '<'
        ? c < 0
        : op === '<='
          ? c <= 0
          : op === '>'
            ? c > 0
            : c >= 0;
}

/** `x IN set` as SQL: found → TRUE; else NULL if x or any member is NULL and the set is not empty; else FALSE. */
function inSet(x: Cell, set: readonly Cell[]): Truth {
  if (set.length === 0) return false;
  if (x === null) return null;
  let result: Truth = false;
  for (const v of set) {
    const r = cmp('=', x, v);
    if (r === true) return true;
    if (r === null) result = null;
  }
  return result;
}

/** A bare column is the innermost frame's, `t.c` the innermost frame on t's. */
function columnIn(frames: readonly Frame[], ref: ColumnRef): Cell {
  for (let i = frames.length - 1; i >= 0; i -= 1) {
    const f = frames[i] as Frame;
    if (ref.kind === 'column' || f.table === ref.table) return f.row[ref.name] ?? null;
  }
  throw new Error(`no table ${ref.kind === 'qualified_column' ? ref.table : ''} in scope`);
}

/** The truth of `expr` with `frames` in scope, outermost (the policy's own row) first. */
export function referenceEvaluate(expr: Expr, world: ReferenceWorld, frames: readonly Frame[]): Truth {
  const column = (ref: ColumnRef): Cell => columnIn(frames, ref);
  const visible = (table: string): readonly SnapshotRow[] =>
    (world.tables.get(table) ?? []).filter(
      (row) => referenceEvaluate(world.readPolicy(table), world, [{ table, row }]) === true,
    );
  const value = (e: Expr): Cell => {
    switch (e.kind) {
      case 'column':
      case 'qualified_column':
        return column(e);
      case 'literal':
        return e.value;
      case 'auth':
        return e.attr === 'id'
          ? world.user.id
          : e.attr === 'username'
            ? world.user.username
            : world.user[e.attr];
      case 'claim':
        throw new Error('claims are not generated here');
      default:
        return truth(e);
    }
  };
  const truth = (e: Expr): Truth => {
    switch (e.kind) {
      case 'anyone':
        return true;
      case 'or':
        return e.operands.reduce<Truth>((acc, o) => or(acc, truth(o)), false);
      case 'and':
        return e.operands.reduce<Truth>((acc, o) => and(acc, truth(o)), true);
      case 'not':
        return not(truth(e.operand));
      case 'compare':
        return cmp(e.op, value(e.left), value(e.right));
      case 'is_null':
        return (value(e.operand) === null) !== e.negated;
      case 'in': {
        const r = inSet(
          value(e.operand),
          e.values.map((v) => v.value),
        );
        return e.negated ? not(r) : r;
      }
      case 'exists':
        return visible(e.from.name).some(
          (row) => referenceEvaluate(e.where, world, [...frames, { table: e.from.name, row }]) === true,
        );
      case 'in_select': {
        const inner = e.from.name;
        const set = visible(inner)
          .filter((row) => referenceEvaluate(e.where, world, [...frames, { table: inner, row }]) === true)
          .map((row) => columnIn([...frames, { table: inner, row }], e.column));
        const r = inSet(value(e.operand), set);
        return e.negated ? not(r) : r;
      }
      default: {
        const v = value(e);
        return v === null ? null : typeof v === 'boolean' ? v : v !== 0;
      }
    }
  };
  return truth(expr);
}
