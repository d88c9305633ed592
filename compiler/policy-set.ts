// The compiled, cached form of `auth_policies` that the runtime consults on every request: rows
// parsed once, then per (table, action) the resolution, the combined expression, its SQL
// predicate and its evaluator, built on first use and memoised. Requests never parse or build SQL.

import { ast, type Expr, type Position } from '../grammar/ast.js';
import { parsePolicy } from '../grammar/parse-policy.js';
import { PolicySyntaxError } from '../grammar/policy-syntax-error.js';
import { analyze, conjuncts, type ColumnTypes } from './analyze.js';
import {
  compileCondition,
  evaluateCompiled,
  outcomesForUser,
  TRUE,
  type CompiledCondition,
} from './evaluate.js';
import { resolvePolicies, type Resolution } from './resolve.js';
import { compileToSql } from './sql/compile-predicate.js';
import type { Dialect } from './sql/dialect.js';
import type { SqlFragment } from './sql/fragment.js';
import type { Action, AuthUser, PolicyRow } from './types.js';

/** A policy row with its parsed expression, or the syntax error that keeps it from allowing anything. */
export type ParsedPolicy =
  | { readonly row: PolicyRow; readonly ok: true; readonly expr: Expr }
  | { readonly row: PolicyRow; readonly ok: false; readonly error: PolicySyntaxError };

/** Why a chosen row counts as `false` for this table (it denies; the others still decide). */
export interface PolicyIssue {
  readonly policyId: number;
  readonly kind: 'syntax' | 'type';
  readonly message: string;
  readonly pos: Position;
}

export type Decision =
  | { readonly kind: 'allow' }
  | { readonly kind: 'deny' }
  /** Allowed on the rows where `predicate` is TRUE: AND it into the statement's WHERE. */
  | { readonly kind: 'filter'; readonly predicate: SqlFragment };

export interface CompiledPolicy {
  readonly table: string;
  readonly action: Action;
  readonly resolution: Resolution;
  /** The chosen rows that parse and type-check, OR-ed; `false` when none. */
  readonly expr: Expr;
  /** Columns the expression names, in order of first appearance. */
  readonly columns: readonly string[];
  /** Named columns the table lacks: the policy cannot apply (the runtime answers 403 naming one). */
  readonly missingColumns: readonly string[];
  /** Chosen rows that do not parse or do not type-check on this table. */
  readonly issues: readonly PolicyIssue[];
  /** Columns `c` of top-level AND conjuncts `c = auth_user.id`: filled with the user's id on create. */
  readonly ownerColumns: readonly string[];
  /** The whole expression as a WHERE predicate; auth_user values are bound when rendered. */
  readonly predicate: SqlFragment;
  /** What `user` alone decides, before any SQL. Deny is 401 for anonymous, 403 otherwise. */
  decide(user: AuthUser): Decision;
  /** Whether a new or changed row satisfies the policy (TRUE only; missing columns → false). */
  check(row: Readonly<Record<string, unknown>>, user: AuthUser): boolean;
}

export interface PolicySet {
  readonly dialect: Dialect;
  /** Every row in the order given, parsed once (for `policy explain`). */
  readonly policies: readonly ParsedPolicy[];
  policyFor(table: string, action: Action, columns: ColumnTypes): CompiledPolicy;
}

function parseRow(row: PolicyRow): ParsedPolicy {
  try {
    return Object.freeze({ row, ok: true, expr: parsePolicy(row.expression) });
  } catch (error) {
    if (error instanceof PolicySyntaxError) return Object.freeze({ row, ok: false, error });
    throw error;
  }
}

/** `c = auth_user.id` or `auth_user.id = c` among the conjuncts of a top-level AND. */
export function ownerColumnsOf(expr: Expr): readonly string[] {
  const owners: string[] = [];
  for (const c of conjuncts(expr)) {
    if (c.kind !== 'compare' || c.op !== '=') continue;
    const [col, other] = c.left.kind === 'column' ? [c.left, c.right] : [c.right, c.left];
    if (col.kind === 'column' && other.kind === 'auth' && other.attr === 'id' && !owners.includes(col.name)) {
      owners.push(col.name);
    }
  }
  return Object.freeze(owners);
}

const ALLOW: Decision = Object.freeze({ kind: 'allow' });
const DENY: Decision = Object.freeze({ kind: 'deny' });

function compilePolicy(
  parsed: ReadonlyMap<PolicyRow, ParsedPolicy>,
  resolution: Resolution,
  columns: ColumnTypes,
  dialect: Dialect,
): CompiledPolicy {
  const issues: PolicyIssue[] = [];
  const usable: Expr[] = [];
  const missing = new Set<string>();
  for (const row of resolution.rows) {
    const p = parsed.get(row);
    if (p === undefined) continue;
    if (!p.ok) {
      const { offset, line, column } = p.error;
      issues.push({ policyId: row.id, kind: 'syntax', message: p.error.message, pos: { offset, line, column } });
      continue;
    }
    const analysis = analyze(p.expr, columns);
    analysis.missingColumns.forEach((c) => missing.add(c));
    const problem = analysis.problems[0];
    if (problem !== undefined) issues.push({ policyId: row.id, kind: 'type', message: problem.message, pos: problem.pos });
    else usable.push(p.expr);
  }
  const expr: Expr = usable.length === 0 ? ast.boolean(false) : usable.length === 1 ? (usable[0] as Expr) : ast.or(usable);
  const analysis = analyze(expr, columns);
  const missingColumns = Object.freeze([...missing]);
  const condition: CompiledCondition = compileCondition(expr, columns);
  const predicate = compileToSql(expr, dialect, { columns });
  const filter: Decision = Object.freeze({ kind: 'filter', predicate });
  const usableAtAll = missingColumns.length === 0;

  return Object.freeze({
    table: resolution.table,
    action: resolution.action,
    resolution,
    expr,
    columns: analysis.columns,
    missingColumns,
    issues: Object.freeze(issues),
    ownerColumns: usableAtAll ? ownerColumnsOf(expr) : Object.freeze([]),
    predicate,
    decide(user: AuthUser): Decision {
      if (!usableAtAll) return DENY;
      const outcomes = outcomesForUser(condition, user);
      if (outcomes === TRUE) return ALLOW;
      return (outcomes & TRUE) === 0 ? DENY : filter;
    },
    check(row: Readonly<Record<string, unknown>>, user: AuthUser): boolean {
      return usableAtAll && evaluateCompiled(condition, user, row, columns) === true;
    },
  });
}

function sameColumns(a: ColumnTypes, b: ColumnTypes): boolean {
  if (a === b) return true;
  if (a.size !== b.size) return false;
  for (const [name, type] of a) if (b.get(name) !== type) return false;
  return true;
}

/** Parses every row once; `policyFor` compiles on first use per (table, action) and memoises. */
export function compilePolicySet(rows: readonly PolicyRow[], dialect: Dialect): PolicySet {
  const policies = Object.freeze(rows.map(parseRow));
  const byRow = new Map(policies.map((p) => [p.row, p] as const));
  const cache = new Map<string, { columns: ColumnTypes; policy: CompiledPolicy }>();

  return Object.freeze({
    dialect,
    policies,
    policyFor(table: string, action: Action, columns: ColumnTypes): CompiledPolicy {
      const key = `${table}\u0000${action}`;
      const hit = cache.get(key);
      if (hit !== undefined && sameColumns(hit.columns, columns)) return hit.policy;
      const policy = compilePolicy(byRow, resolvePolicies(rows, table, action), columns, dialect);
      cache.set(key, { columns, policy });
      return policy;
    },
  });
}
