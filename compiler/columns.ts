// Columns: what the chosen policy rows let one caller read and write (docs/policy-language.md).
//
// Given the rows §4.2 chose for (table, action), each with its parsed expression and column rule,
// the caller's auth_user and the table's columns:
// - a chosen row **applies** unless its expression cannot be TRUE for this caller from auth_user
//   alone (`auth_user.is_admin` does not apply to a non-admin); only applying rows grant;
// - read: the primary key is always readable; a column no applying row grants is hidden; one that
//   every applying row grants, or that a row TRUE from auth_user alone grants, is always readable;
//   otherwise it is masked: it shows in a row when the OR of the granting rows' expressions is
//   TRUE for that row, and reads as NULL where only non-granting rows let the row through;
// - create/update: a key of the body is writable under the OR of the expressions of the applying
//   rows that grant it (judged on the row as written; for update before and after the change);
//   never when none grants it.
// A row for table `all` ignores names the table lacks. A row for the table itself that names a
// column the table lacks is reported in `unknownColumns` (the row is broken: validation refuses
// it, and the caller must let it grant nothing).
//
// Enforcement (the design the runtime follows; this module only decides):
// - Portable path: the read's SELECT list writes a masked column `c` as
//   `CASE WHEN <mask> THEN c END AS c`, where <mask> is the OR of the granting rows' row parts
//   compiled by the one SQL walker (compiler/sql/) with the same parameters as the WHERE
//   predicate; filters and `order` on `c` name the same CASE expression (a derived table, or the
//   expression repeated), so they see the masked value and are never an oracle. Hidden columns are
//   left out of `*` and refused by name before any SQL (403/401 `hidden_column`). Still one
//   statement, one round trip.
// - Native path: what no request of the table may read (hidden for every caller whatever
//   auth_user is) is withheld from the request role by column privileges (`GRANT SELECT (a, b)`),
//   printed by `policy compile` and restored by the tamper watch like the policies. The per-row
//   masks are the same CASE expressions compiled from the same expressions, reading auth_user
//   from the session variables (`(select current_setting('rest.user_id', true))`…) that the RLS
//   policies read, so both paths mask the same rows; the runner still sets the variables and runs
//   the statement in one round trip. Writes refuse ungranted keys in-process (403/401
//   `protected_column`) before the statement, and judge `when` conditions in the write's check.

import { ast, type Expr } from '../grammar/ast.js';
import { parseColumnRule, type ColumnRule } from '../grammar/column-rule.js';
import { PolicySyntaxError } from '../grammar/policy-syntax-error.js';
import { compileCondition, outcomesForUser, TRUE, type EvalRelations } from './evaluate.js';
import type { AuthUser, ColumnTypes } from './types.js';

/** A chosen policy row (compiler/resolve.ts) with what the columns decision needs of it. */
export interface ColumnGrant {
  readonly policyId: number;
  /** The row's `table_name`: the table itself, or `all`. */
  readonly tableName: string;
  readonly expr: Expr;
  readonly rule: ColumnRule;
}

export interface ColumnAccessInput {
  /** The rows §4.2 chose for the request's table and action. */
  readonly grants: readonly ColumnGrant[];
  readonly user: AuthUser;
  /** The table's columns, in table order, with their types. */
  readonly columns: ColumnTypes;
  readonly primaryKey: readonly string[];
  /** Subqueries of the expressions, as the policy set evaluates them (optional). */
  readonly relations?: EvalRelations;
}

/** A condition on the row: the OR of the expressions of the rows it comes from. */
export interface RowCondition {
  readonly when: Expr;
  readonly policyIds: readonly number[];
}

export type ReadAccess =
  { readonly kind: 'always' } | ({ readonly kind: 'masked' } & RowCondition) | { readonly kind: 'hidden' };

export type WriteAccess =
  { readonly kind: 'always' } | ({ readonly kind: 'when' } & RowCondition) | { readonly kind: 'never' };

export interface UnknownColumn {
  readonly policyId: number;
  readonly column: string;
}

export interface ColumnAccess<A> {
  /** Per column of the table, in table order. */
  readonly columns: ReadonlyMap<string, A>;
  /** The ids of the chosen rows that apply to this caller. */
  readonly applying: readonly number[];
  readonly unknownColumns: readonly UnknownColumn[];
}

/** Whether `rule` grants `column`. */
export function grantsColumn(rule: ColumnRule, column: string): boolean {
  switch (rule.kind) {
    case 'all':
      return true;
    case 'only':
      return rule.columns.some((c) => c.name === column);
    case 'except':
      return !rule.columns.some((c) => c.name === column);
  }
}

/** Names in `rule` that `columns` lacks. */
export const unknownColumnsOf = (rule: ColumnRule, columns: ColumnTypes): readonly string[] =>
  rule.kind === 'all' ? [] : rule.columns.map((c) => c.name).filter((n) => !columns.has(n));

/**
 * The rule of a policy row, parsed and checked against its table (docs/policy-language.md): every
 * name exists in `columns`, unless the row is for table `all` (names a table lacks are ignored
 * there). Throws 400 `invalid_policy` (a PolicySyntaxError with line:column) otherwise.
 */
export function validateColumnRule(
  text: string | null | undefined,
  tableName: string,
  columns: ColumnTypes | undefined,
): ColumnRule {
  const rule = parseColumnRule(text);
  if (tableName === 'all' || columns === undefined || rule.kind === 'all') return rule;
  const unknown = rule.columns.find((c) => !columns.has(c.name));
  if (unknown !== undefined) {
    const { line, column } = unknown.pos;
    throw new PolicySyntaxError(
      `column '${unknown.name}' does not exist in table '${tableName}' at ${line}:${column}`,
      unknown.pos,
      `a column of table '${tableName}'`,
      `'${unknown.name}'`,
    );
  }
  return rule;
}

interface Judged {
  readonly grant: ColumnGrant;
  /** TRUE for this caller whatever the row: the row's grants need no condition. */
  readonly always: boolean;
}

function judge(input: ColumnAccessInput): {
  readonly applying: readonly Judged[];
  readonly unknownColumns: readonly UnknownColumn[];
} {
  const applying: Judged[] = [];
  const unknownColumns: UnknownColumn[] = [];
  for (const grant of input.grants) {
    if (grant.tableName !== 'all') {
      for (const column of unknownColumnsOf(grant.rule, input.columns))
        unknownColumns.push(Object.freeze({ policyId: grant.policyId, column }));
    }
    const outcomes = outcomesForUser(
      compileCondition(grant.expr, input.columns, input.relations),
      input.user,
    );
    if ((outcomes & TRUE) === 0) continue;
    applying.push({ grant, always: outcomes === TRUE });
  }
  return { applying, unknownColumns };
}

const orOf = (grants: readonly Judged[]): RowCondition => {
  const exprs = grants.map((g) => g.grant.expr);
  return {
    when: exprs.length === 1 ? (exprs[0] as Expr) : ast.or(exprs),
    policyIds: Object.freeze(grants.map((g) => g.grant.policyId)),
  };
};

function access<A>(
  input: ColumnAccessInput,
  decide: (column: string, granting: readonly Judged[], applying: readonly Judged[]) => A,
): ColumnAccess<A> {
  const { applying, unknownColumns } = judge(input);
  const columns = new Map<string, A>();
  for (const column of input.columns.keys()) {
    const granting = applying.filter((j) => grantsColumn(j.grant.rule, column));
    columns.set(column, decide(column, granting, applying));
  }
  return Object.freeze({
    columns,
    applying: Object.freeze(applying.map((j) => j.grant.policyId)),
    unknownColumns: Object.freeze(unknownColumns),
  });
}

const ALWAYS = Object.freeze({ kind: 'always' as const });
const HIDDEN = Object.freeze({ kind: 'hidden' as const });
const NEVER = Object.freeze({ kind: 'never' as const });

/** read / read_mine: per column, always readable, masked under a condition, or hidden. */
export function readableColumns(input: ColumnAccessInput): ColumnAccess<ReadAccess> {
  const key = new Set(input.primaryKey);
  return access<ReadAccess>(input, (column, granting, applying) => {
    if (key.has(column)) return ALWAYS;
    if (granting.length === 0) return HIDDEN;
    // A row the caller sees came through an applying row: when each of them grants the column,
    // it shows in every visible row.
    if (granting.length === applying.length || granting.some((g) => g.always)) return ALWAYS;
    return Object.freeze({ kind: 'masked', ...orOf(granting) });
  });
}

/** create / update: per column, which rows' expressions must hold on the row for a body to set it. */
export function writableColumns(input: ColumnAccessInput): ColumnAccess<WriteAccess> {
  return access<WriteAccess>(input, (_column, granting) => {
    if (granting.length === 0) return NEVER;
    if (granting.some((g) => g.always)) return ALWAYS;
    return Object.freeze({ kind: 'when', ...orOf(granting) });
  });
}
