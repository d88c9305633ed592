// Escalation warnings (docs/policy-language.md): a relation policy grants access through rows of
// another table — its inner table. When a non-admin can write rows of that inner table, a user may
// grant themselves the access: add a membership, a share or a role (`in (select …)`, `exists`:
// the inner table's create or update), or remove the row that keeps them out (`not in`,
// `not exists`: its delete or update). "Can write" is judged from the resolved policies alone
// (compiler/resolve.ts): a chosen row that is not FALSE for every non-admin from auth_user alone
// lets non-admins write — `auth_user.is_admin` and no row at all are safe, `user_id =
// auth_user.id` is not. Whether the inner table's own read policy would show the written row to
// the subquery is not considered: a warning is cheap, a missed escalation is not.

import { ast, visit, type Expr } from '../grammar/ast.js';
import { compileCondition, outcomesForUser, TRUE } from './evaluate.js';
import { resolvePolicies } from './resolve.js';
import { ANONYMOUS, type PolicyRow } from './types.js';

/** The write actions through which an inner table's rows change what a subquery finds. */
export type EscalationAction = 'create' | 'update' | 'delete';

export interface EscalationWarning {
  /** The inner table whose rows a non-admin can write. */
  readonly table: string;
  /** How a non-admin changes it. */
  readonly action: EscalationAction;
  /** The policy row that lets non-admins do it (a chosen row of `table`, `action`). */
  readonly policyId: number;
  /** The relation policy row that grants access through `table`. */
  readonly relationPolicyId: number;
  /** The table that relation policy protects (`all` for a row of every table). */
  readonly relationTable: string;
  readonly message: string;
}

/** +1: more inner rows grant more; -1: fewer inner rows grant more; 0: either. */
type Polarity = 1 | -1 | 0;
const flip = (p: Polarity): Polarity => (p === 0 ? 0 : p === 1 ? -1 : 1);

const ACTIONS_OF: Readonly<Record<Polarity, readonly EscalationAction[]>> = {
  1: ['create', 'update'],
  [-1]: ['delete', 'update'],
  0: ['create', 'update', 'delete'],
};

/** Every (inner table, write action) through which `expr`'s subqueries can be made to grant more. */
export function innerWrites(expr: Expr): ReadonlyMap<string, ReadonlySet<EscalationAction>> {
  const found = new Map<string, Set<EscalationAction>>();
  const record = (table: string, p: Polarity): void => {
    const actions = found.get(table) ?? new Set<EscalationAction>();
    for (const a of ACTIONS_OF[p]) actions.add(a);
    found.set(table, actions);
  };
  const walk = (e: Expr, p: Polarity): void =>
    visit<void>(e, {
      anyone: () => {},
      or: (n) => n.operands.forEach((o) => walk(o, p)),
      and: (n) => n.operands.forEach((o) => walk(o, p)),
      not: (n) => walk(n.operand, flip(p)),
      // A condition compared or tested as a value can be wanted either way.
      compare: (n) => {
        walk(n.left, 0);
        walk(n.right, 0);
      },
      is_null: (n) => walk(n.operand, 0),
      in: (n) => walk(n.operand, 0),
      column: () => {},
      qualified_column: () => {},
      exists: (n) => {
        record(n.from.name, p);
        walk(n.where, p);
      },
      in_select: (n) => {
        const inner = n.negated ? flip(p) : p;
        record(n.from.name, inner);
        walk(n.operand, 0);
        walk(n.where, inner);
      },
      auth: () => {},
      claim: () => {},
      literal: () => {},
    });
  walk(expr, 1);
  return found;
}

/** A column name no table can have: what every auth_user attribute but is_admin becomes. */
const UNKNOWN_VALUE = '\u0000unknown';

/** `expr` for some non-admin: is_admin is false, every other attribute and claim is unknown. */
function forSomeNonAdmin(expr: Expr): Expr {
  const map = (e: Expr): Expr =>
    visit<Expr>(e, {
      anyone: (n) => n,
      or: (n) => ast.or(n.operands.map(map), n.pos),
      and: (n) => ast.and(n.operands.map(map), n.pos),
      not: (n) => ast.not(map(n.operand), n.pos),
      compare: (n) => ast.compare(n.op, map(n.left), map(n.right), n.pos),
      is_null: (n) => ast.isNull(map(n.operand), n.negated, n.pos),
      in: (n) => ast.in(map(n.operand), n.values, n.negated, n.pos),
      column: (n) => n,
      qualified_column: (n) => n,
      exists: (n) => ast.exists(n.from.name, map(n.where), n.pos, n.from.pos),
      in_select: (n) =>
        ast.inSelect(map(n.operand), n.column, n.from.name, map(n.where), n.negated, n.pos, n.from.pos),
      auth: (n) => (n.attr === 'is_admin' ? ast.boolean(false, n.pos) : ast.column(UNKNOWN_VALUE, n.pos)),
      claim: (n) => ast.column(UNKNOWN_VALUE, n.pos),
      literal: (n) => n,
    });
  return map(expr);
}

/**
 * Whether `expr` may be TRUE for some non-admin caller on some row, judged from auth_user alone:
 * FALSE only when every non-admin is refused whatever the rows hold (`auth_user.is_admin`,
 * `false`, `auth_user.is_admin and …`).
 */
export function mayAllowNonAdmin(expr: Expr): boolean {
  const condition = compileCondition(forSomeNonAdmin(expr));
  return (outcomesForUser(condition, ANONYMOUS) & TRUE) !== 0;
}

const describeRow = (id: number, table: string): string =>
  table === 'all' ? `policy ${id} (every table)` : `policy ${id} (${table})`;

/**
 * Every escalation among `rows`. `parse` gives a row's expression, or undefined when the row is
 * broken (it allows nothing: it neither grants through a subquery nor lets anyone write). Ordered
 * by relation row, inner table, action and writing row; each combination once.
 */
export function findEscalations(
  rows: readonly PolicyRow[],
  parse: (row: PolicyRow) => Expr | undefined,
): readonly EscalationWarning[] {
  const parsed = new Map<PolicyRow, Expr>();
  for (const row of rows) {
    const expr = parse(row);
    if (expr !== undefined) parsed.set(row, expr);
  }
  const live = rows.filter((r) => parsed.has(r));
  const writers = new Map<string, readonly PolicyRow[]>();
  const writersOf = (table: string, action: EscalationAction): readonly PolicyRow[] => {
    const key = `${table}\u0000${action}`;
    let found = writers.get(key);
    if (found === undefined) {
      found = resolvePolicies(live, table, action).rows.filter((r) => {
        const expr = parsed.get(r);
        return expr !== undefined && mayAllowNonAdmin(expr);
      });
      writers.set(key, found);
    }
    return found;
  };

  const warnings: EscalationWarning[] = [];
  for (const relation of [...live].sort((a, b) => a.id - b.id)) {
    const expr = parsed.get(relation);
    if (expr === undefined) continue;
    for (const [table, actions] of innerWrites(expr)) {
      for (const action of ['create', 'update', 'delete'] as const) {
        if (!actions.has(action)) continue;
        for (const writer of writersOf(table, action)) {
          warnings.push(
            Object.freeze({
              table,
              action,
              policyId: writer.id,
              relationPolicyId: relation.id,
              relationTable: relation.table_name,
              message:
                `${describeRow(relation.id, relation.table_name)} grants access through rows of ` +
                `'${table}', and ${describeRow(writer.id, writer.table_name)} lets non-admins ` +
                `${action} rows of '${table}': a user may grant themselves that access`,
            }),
          );
        }
      }
    }
  }
  return Object.freeze(warnings);
}
