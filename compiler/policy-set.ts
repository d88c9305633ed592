// The compiled, cached form of `auth_policies` that the runtime consults on every request: rows
// parsed once, then per (table, action) the resolution, the combined expression, its SQL
// predicate and its evaluator, built on first use and memoised. Requests never parse or build SQL.
// A subquery sees its table through that table's own resolved `read` policy (docs/policy-language.md): the
// portable predicate inlines it, the in-process decision narrows by it; both come from this set.

import { ast, hasSubquery, type Expr, type Position } from '../grammar/ast.js';
import { parsePolicy } from '../grammar/parse-policy.js';
import { printPolicy } from '../grammar/print-policy.js';
import { PolicySyntaxError } from '../grammar/policy-syntax-error.js';
import { analyze, conjuncts } from './analyze.js';
import type { ColumnTypes } from './types.js';
import { findCycles, type CycleReport } from './cycles.js';
import {
  compileCondition,
  evaluateCompiled,
  outcomesForUser,
  TRUE,
  type CompiledCondition,
} from './evaluate.js';
import { resolvePolicies, type Resolution } from './resolve.js';
import type { SchemaTypes } from './scope.js';
import { columnRulesOf, type ColumnRules, type UsableRow } from './column-rules.js';
import { compileToSql } from './sql/compile-predicate.js';
import type { Dialect } from './sql/dialect.js';
import type { SqlFragment } from './sql/fragment.js';
import type { Action, AuthUser, PolicyRow } from './types.js';

/**
 * The chosen rows' expressions less those another one absorbs: a row whose conjuncts include every
 * conjunct of another row adds no row to their OR (`a or (a and b)` is `a`, in SQL's three-valued
 * logic too), and of two rows with the same conjuncts the first is kept. Such a row is written to
 * grant columns under a narrower condition (docs/policy-language.md, Columns), and its column rule
 * is read from the row itself: dropping it from the row predicate leaves the plain predicate, which
 * the database can answer from the same index.
 */
export function withoutAbsorbed(exprs: readonly Expr[]): readonly Expr[] {
  const sets = exprs.map((e) => new Set(conjuncts(e).map(printPolicy)));
  const within = (small: ReadonlySet<string>, large: ReadonlySet<string>): boolean =>
    [...small].every((c) => large.has(c));
  return exprs.filter((_, i) => {
    const mine = sets[i] as ReadonlySet<string>;
    return !sets.some((other, j) => j !== i && within(other, mine) && (other.size < mine.size || j < i));
  });
}

/** A policy row with its parsed expression, or the syntax error that keeps it from allowing anything. */
export type ParsedPolicy =
  | { readonly row: PolicyRow; readonly ok: true; readonly expr: Expr }
  | { readonly row: PolicyRow; readonly ok: false; readonly error: PolicySyntaxError };

/**
 * Why a chosen row counts as `false` for this table (it denies; the others still decide):
 * `syntax`, `type` (analysis problems, unknown subquery tables and columns included), `relation`
 * (it has a subquery but the set was asked without the schema of every table), `cycle` (its
 * subquery closes a cycle through this table; compiler/cycles.ts).
 */
export interface PolicyIssue {
  readonly policyId: number;
  readonly kind: 'syntax' | 'type' | 'relation' | 'cycle';
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
  /** Columns of this table the expression names, in order of first appearance. */
  readonly columns: readonly string[];
  /** Tables its subqueries read, each with the columns of it named (for explain and indexes). */
  readonly relations: ReadonlyMap<string, readonly string[]>;
  /**
   * The `read` policy of each table a subquery reads, as this set resolves it: what the portable
   * predicate inlines into that subquery and what the inner table's RLS applies natively.
   */
  readonly inlined: ReadonlyMap<string, CompiledPolicy>;
  /** The schema it was compiled against (undefined: this table's columns only). */
  readonly schema: SchemaTypes | undefined;
  /** Named columns the table lacks: the policy cannot apply (the runtime answers 403 naming one). */
  readonly missingColumns: readonly string[];
  /** Chosen rows that do not parse or do not type-check on this table. */
  readonly issues: readonly PolicyIssue[];
  /** The chosen rows that parse and type-check (those `expr` OR-s), with their expressions. */
  readonly usable: readonly UsableRow[];
  /**
   * What the usable rows' `columns` let a caller read and write (compiler/column-rules.ts), built
   * on first use; undefined when each of them grants every column.
   */
  readonly columnRules: ColumnRules | undefined;
  /** Columns `c` of top-level AND conjuncts `c = auth_user.id`: filled with the user's id on create. */
  readonly ownerColumns: readonly string[];
  /**
   * The whole expression as a WHERE predicate (the portable path: inner tables' read policies
   * inlined into subqueries); auth_user values are bound when rendered.
   */
  readonly predicate: SqlFragment;
  /**
   * A part of `expr` (a chosen row's expression, one of its disjuncts or conjuncts) compiled as
   * `predicate` is: for `policy explain --row`, which evaluates each part on the stored row.
   */
  compilePart(part: Expr): SqlFragment;
  /**
   * What `user` alone decides, before any SQL. Deny is 401 for anonymous, 403 otherwise. A
   * subquery is row-dependent unless auth_user alone empties it (its where clause or the inner
   * table's read policy can never be TRUE for this user).
   */
  decide(user: AuthUser): Decision;
  /**
   * Whether a new or changed row satisfies the policy, in-process (TRUE only; missing columns →
   * false). `undefined` when rows of another table decide (a subquery): only the database can
   * judge it, as the runtime does for every check (runtime/enforce/stored-checks.ts). An oracle.
   */
  check(row: Readonly<Record<string, unknown>>, user: AuthUser): boolean | undefined;
}

export interface PolicySet {
  readonly dialect: Dialect;
  /** Every row in the order given, parsed once (for `policy explain`). */
  readonly policies: readonly ParsedPolicy[];
  /** Tables some row's subquery reads (their RLS SELECT policy tells a subquery from a request). */
  readonly subqueryTables: ReadonlySet<string>;
  /** `table_name` of every row whose expression has a subquery (`all` included as written). */
  readonly relationalTables: ReadonlySet<string>;
  /**
   * The policy deciding `action` on `table`. `schema` (every table's column types; additive) is
   * needed by policies with subqueries: without it they deny (issue `relation`). The memo stays
   * valid while this table's columns, and those of every table its subqueries reach, are the same.
   */
  policyFor(table: string, action: Action, columns: ColumnTypes, schema?: SchemaTypes): CompiledPolicy;
  /** The cycles through subqueries among the tables of `schema` (compiler/cycles.ts). */
  cycles(schema: SchemaTypes): CycleReport;
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

/** What compilePolicy needs from its set: inner tables' read policies and the cycles. */
interface PolicyContext {
  readonly parsed: ReadonlyMap<PolicyRow, ParsedPolicy>;
  readonly dialect: Dialect;
  readonly schema: SchemaTypes | undefined;
  readonly cycles: CycleReport | undefined;
  /** The read policy of a table a subquery reads; undefined when it is being compiled (a cycle). */
  readonly readPolicy: (table: string) => CompiledPolicy | undefined;
}

const NO_COLUMNS: ColumnTypes = new Map();
/** Each policy's evaluator, built on first use (the native RLS compiler never needs one). */
const conditions = new WeakMap<CompiledPolicy, () => CompiledCondition>();

/** What a subquery on a table sees of it: its read policy's expression, `false` when unusable. */
function visibleRows(policy: CompiledPolicy | undefined): Expr {
  return policy === undefined || policy.missingColumns.length > 0 ? ast.boolean(false) : policy.expr;
}

function compilePolicy(resolution: Resolution, columns: ColumnTypes, ctx: PolicyContext): CompiledPolicy {
  const issues: PolicyIssue[] = [];
  const usable: Expr[] = [];
  const usableRows: UsableRow[] = [];
  const missing = new Set<string>();
  const table = resolution.table;
  const relation = ctx.schema === undefined ? { table } : { table, schema: ctx.schema };
  for (const row of resolution.rows) {
    const p = ctx.parsed.get(row);
    if (p === undefined) continue;
    if (!p.ok) {
      const { offset, line, column } = p.error;
      issues.push({
        policyId: row.id,
        kind: 'syntax',
        message: p.error.message,
        pos: { offset, line, column },
      });
      continue;
    }
    const analysis = analyze(p.expr, columns, relation);
    analysis.missingColumns.forEach((c) => missing.add(c));
    const problem = analysis.problems[0];
    const firstRead = [...analysis.relations.keys()][0];
    if (problem !== undefined) {
      issues.push({ policyId: row.id, kind: 'type', message: problem.message, pos: problem.pos });
    } else if (firstRead !== undefined && ctx.schema === undefined) {
      issues.push({
        policyId: row.id,
        kind: 'relation',
        message: `the policy reads table '${firstRead}', and the schema of every table was not given`,
        pos: p.expr.pos,
      });
    } else if (firstRead !== undefined && ctx.cycles?.isBroken(row.id, table) === true) {
      const cycle = ctx.cycles.cycles.find((c) => c.tables.includes(table));
      issues.push({
        policyId: row.id,
        kind: 'cycle',
        message: `the policy's subqueries make a cycle${cycle === undefined ? '' : `: ${cycle.path}`}`,
        pos: p.expr.pos,
      });
    } else {
      usable.push(p.expr);
      usableRows.push(Object.freeze({ row, expr: p.expr }));
    }
  }
  const kept = withoutAbsorbed(usable);
  const expr: Expr =
    kept.length === 0 ? ast.boolean(false) : kept.length === 1 ? (kept[0] as Expr) : ast.or(kept);
  const analysis = analyze(expr, columns, relation);
  const missingColumns = Object.freeze([...missing]);
  const inlined = new Map<string, CompiledPolicy>();
  for (const inner of analysis.relations.keys()) {
    const policy = ctx.readPolicy(inner);
    if (policy !== undefined) inlined.set(inner, policy);
  }
  const innerExpr = (t: string): Expr => visibleRows(inlined.get(t) ?? ctx.readPolicy(t));
  // The evaluator and this dialect's predicate are built when first asked for: a request's
  // decision needs both, `compileRls` (which writes its own native SQL from `expr`) neither.
  const evalRelations = {
    ...relation,
    innerCondition: (t: string) => {
      const policy = inlined.get(t) ?? ctx.readPolicy(t);
      return policy === undefined || policy.missingColumns.length > 0
        ? undefined
        : conditions.get(policy)?.();
    },
  };
  let conditionMemo: CompiledCondition | undefined;
  const condition = (): CompiledCondition =>
    (conditionMemo ??= compileCondition(expr, columns, evalRelations));
  let rulesMemo: { readonly rules: ColumnRules | undefined } | undefined;
  const compilePart = (part: Expr): SqlFragment =>
    compileToSql(part, ctx.dialect, { columns, ...relation, inline: innerExpr });
  let filterMemo: Decision | undefined;
  const filter = (): Decision =>
    (filterMemo ??= Object.freeze({ kind: 'filter', predicate: compilePart(expr) }));
  const usableAtAll = missingColumns.length === 0;
  const readsTables = analysis.relations.size > 0;

  const policy: CompiledPolicy = Object.freeze({
    table,
    action: resolution.action,
    resolution,
    expr,
    columns: analysis.columns,
    relations: analysis.relations,
    inlined,
    schema: ctx.schema,
    missingColumns,
    issues: Object.freeze(issues),
    usable: Object.freeze(usableRows),
    get columnRules(): ColumnRules | undefined {
      rulesMemo ??= { rules: usableAtAll ? columnRulesOf(usableRows, columns, evalRelations) : undefined };
      return rulesMemo.rules;
    },
    ownerColumns: usableAtAll ? ownerColumnsOf(expr) : Object.freeze([]),
    get predicate(): SqlFragment {
      return (filter() as { readonly predicate: SqlFragment }).predicate;
    },
    compilePart,
    decide(user: AuthUser): Decision {
      if (!usableAtAll) return DENY;
      const outcomes = outcomesForUser(condition(), user);
      if (outcomes === TRUE) return ALLOW;
      return (outcomes & TRUE) === 0 ? DENY : filter();
    },
    check(row: Readonly<Record<string, unknown>>, user: AuthUser): boolean | undefined {
      if (!usableAtAll) return false;
      const verdict = evaluateCompiled(condition(), user, row, columns);
      return verdict === undefined && readsTables ? undefined : verdict === true;
    },
  });
  conditions.set(policy, condition);
  return policy;
}

function sameColumns(a: ColumnTypes | undefined, b: ColumnTypes | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a.size !== b.size) return false;
  for (const [name, type] of a) if (b.get(name) !== type) return false;
  return true;
}

/**
 * Every table a compiled policy's subqueries reach, through the inlined read policies too. The
 * tables its chosen rows read (`readsOf`) count even when a row did not compile because one was
 * missing (renamed away, dropped): its return must recompile the policy.
 */
function reachedTables(
  policy: CompiledPolicy,
  readsOf: ReadonlyMap<PolicyRow, readonly string[]>,
  into = new Set<string>(),
): Set<string> {
  for (const [table, inner] of policy.inlined) {
    if (into.has(table)) continue;
    into.add(table);
    reachedTables(inner, readsOf, into);
  }
  for (const table of policy.relations.keys()) into.add(table);
  for (const row of policy.resolution.rows) for (const table of readsOf.get(row) ?? []) into.add(table);
  return into;
}

interface MemoEntry {
  readonly columns: ColumnTypes;
  readonly schema: SchemaTypes | undefined;
  /** The column types, at compile time, of every table the policy's subqueries reach. */
  readonly reached: ReadonlyMap<string, ColumnTypes | undefined>;
  /** The cycles' paths at compile time, when any chosen row has a subquery. */
  readonly cycles: string | undefined;
  readonly policy: CompiledPolicy;
}

/** Parses every row once; `policyFor` compiles on first use per (table, action) and memoises. */
export function compilePolicySet(rows: readonly PolicyRow[], dialect: Dialect): PolicySet {
  const policies = Object.freeze(rows.map(parseRow));
  const byRow = new Map(policies.map((p) => [p.row, p] as const));
  const relational = new Set(policies.filter((p) => p.ok && hasSubquery(p.expr)).map((p) => p.row));
  const subqueryTables = new Set<string>();
  const cache = new Map<string, MemoEntry>();
  const cycleCache = new WeakMap<SchemaTypes, CycleReport>();
  const compiling = new Set<string>();
  /** The tables each row's subqueries read, whether or not they exist now. */
  const readsOf = new Map<PolicyRow, readonly string[]>();
  for (const p of policies) {
    if (!p.ok) continue;
    const reads = [...analyze(p.expr).relations.keys()];
    readsOf.set(p.row, reads);
    for (const t of reads) subqueryTables.add(t);
  }

  const cycles = (schema: SchemaTypes): CycleReport => {
    let report = cycleCache.get(schema);
    if (report === undefined) {
      report = findCycles(rows, schema.keys(), (row) => {
        const p = byRow.get(row);
        return p?.ok === true ? p.expr : undefined;
      });
      cycleCache.set(schema, report);
    }
    return report;
  };
  const cycleKey = (schema: SchemaTypes | undefined): string =>
    schema === undefined
      ? ''
      : cycles(schema)
          .cycles.map((c) => c.path)
          .join('\n');

  const fresh = (hit: MemoEntry, columns: ColumnTypes, schema: SchemaTypes | undefined): boolean => {
    if (!sameColumns(hit.columns, columns)) return false;
    if (hit.schema === schema) return true;
    if (hit.schema === undefined || schema === undefined) return false;
    for (const [table, types] of hit.reached) if (!sameColumns(types, schema.get(table))) return false;
    return hit.cycles === undefined || hit.cycles === cycleKey(schema);
  };

  const policyFor = (
    table: string,
    action: Action,
    columns: ColumnTypes,
    schema?: SchemaTypes,
  ): CompiledPolicy => {
    const key = `${table}\u0000${action}`;
    const hit = cache.get(key);
    if (hit !== undefined && fresh(hit, columns, schema)) return hit.policy;
    const resolution = resolvePolicies(rows, table, action);
    compiling.add(key);
    let policy: CompiledPolicy;
    try {
      policy = compilePolicy(resolution, columns, {
        parsed: byRow,
        dialect,
        schema,
        cycles: schema === undefined ? undefined : cycles(schema),
        readPolicy: (inner) =>
          schema === undefined || compiling.has(`${inner}\u0000read`)
            ? undefined
            : policyFor(inner, 'read', schema.get(inner) ?? NO_COLUMNS, schema),
      });
    } finally {
      compiling.delete(key);
    }
    const reached = new Map([...reachedTables(policy, readsOf)].map((t) => [t, schema?.get(t)] as const));
    const anyRelational = resolution.rows.some((r) => relational.has(r));
    cache.set(key, {
      columns,
      schema,
      reached,
      cycles: anyRelational ? cycleKey(schema) : undefined,
      policy,
    });
    return policy;
  };

  const relationalTables = new Set([...relational].map((row) => row.table_name));
  return Object.freeze({ dialect, policies, subqueryTables, relationalTables, policyFor, cycles });
}
