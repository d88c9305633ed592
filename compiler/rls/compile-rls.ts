// PostgreSQL-native enforcement: the resolved policies of one table as reviewable, deterministic
// DDL — ENABLE ROW LEVEL SECURITY, one RESTRICTIVE policy per command for the rest roles, and one
// permissive policy for everyone that keeps every other role's access as it was before RLS.

import { postgresDialect } from '../sql/postgres-dialect.js';
import { compileToSql } from '../sql/compile-predicate.js';
import { renderInlinePostgres } from '../sql/fragment.js';
import { compilePolicySet, type CompiledPolicy, type PolicySet } from '../policy-set.js';
import type { ColumnTypes } from '../types.js';
import type { SchemaTypes } from '../scope.js';
import { postgresLiteral } from '../sql/fragment.js';
import type { Action, PolicyRow } from '../types.js';
import { actionSettingSql, SESSION_BINDING, tableSettingSql } from './session-settings.js';

export type RlsCommand = 'select' | 'insert' | 'update' | 'delete' | 'others';

export interface RlsInput {
  readonly table: string;
  readonly columns: ColumnTypes;
  /** Every row of auth_policies (resolution happens here), or a compiled set of them. */
  readonly policies: readonly PolicyRow[] | PolicySet;
  /** The roles requests run as (`SET LOCAL ROLE`); the generated policies apply to them only. */
  readonly roles: readonly string[];
  /** Every table's column types: needed by policies with subqueries (else they deny). */
  readonly schema?: SchemaTypes;
}

/** PostgreSQL truncates identifiers to 63 bytes (NAMEDATALEN - 1). */
const MAX_NAME_BYTES = 63;
const utf8 = new TextEncoder();

/** FNV-1a, 32 bits: a short, stable tag that keeps truncated names distinct. */
function shortHash(text: string): string {
  let h = 0x811c9dc5;
  for (const byte of utf8.encode(text)) h = Math.imul(h ^ byte, 0x01000193) >>> 0;
  return h.toString(16).padStart(8, '0');
}

/** The longest prefix of `text` (whole code points) that fits in `bytes` UTF-8 bytes. */
function truncateUtf8(text: string, bytes: number): string {
  let out = '';
  let used = 0;
  for (const ch of text) {
    const size = utf8.encode(ch).length;
    if (used + size > bytes) break;
    out += ch;
    used += size;
  }
  return out;
}

/** `rest_<table>_<command>`; past 63 bytes the table part is cut and tagged with a hash of it. */
export function rlsPolicyName(table: string, command: RlsCommand): string {
  const name = `rest_${table}_${command}`;
  if (utf8.encode(name).length <= MAX_NAME_BYTES) return name;
  const suffix = `_${shortHash(table)}_${command}`;
  return `rest_${truncateUtf8(table, MAX_NAME_BYTES - 'rest_'.length - suffix.length)}${suffix}`;
}

/** Every policy name compileRls generates for `table` (for reconciling: drop the stale ones). */
export const rlsPolicyNames = (table: string): readonly string[] =>
  (['select', 'insert', 'update', 'delete', 'others'] as const).map((c) => rlsPolicyName(table, c));

// PostgreSQL does not pull a sublink in a row-level security qual up into a join: `team_id IN
// (SELECT …)` stays a hashed SubPlan tested on every row the scan walks (under ORDER BY id LIMIT,
// the whole primary key). An uncorrelated ARRAY(SELECT …) is an InitPlan computed once per
// statement, still under the inner table's own RLS, and `team_id = ANY ($n)` can be an index
// condition (BENCHMARKS.md, team membership, says when the planner takes it). The portable path
// keeps IN: there the planner turns it into a semi-join, and the array form, whose length it cannot
// estimate, measured 2.5× slower.
/**
 * The native predicate of a compiled policy: auth_user read from the rest.* settings; subqueries
 * written as they are, PostgreSQL applying the inner tables' own RLS — an uncorrelated
 * `x [not] in (select …)` as `x = ANY (ARRAY(SELECT …))` (`<> ALL`).
 */
export function nativePredicateSql(policy: CompiledPolicy, columns: ColumnTypes): string {
  if (policy.missingColumns.length > 0) return 'false';
  const relation =
    policy.schema === undefined ? { table: policy.table } : { table: policy.table, schema: policy.schema };
  return renderInlinePostgres(
    compileToSql(policy.expr, postgresDialect, {
      columns,
      auth: SESSION_BINDING,
      arrayMembership: true,
      ...relation,
    }),
  );
}

// The SELECT policy also filters the rows an UPDATE or DELETE reads and the rows INSERT/UPDATE …
// RETURNING give back; it defers to the write's own policy then, so both paths return the same
// rows (https://www.postgresql.org/docs/current/sql-createpolicy.html#SQL-CREATEPOLICY-SUMMARY).
const SELECT_ACTIONS: readonly Action[] = ['read', 'read_mine', 'create', 'update', 'delete'];

// Restrictive policies are AND-ed with the permissive ones, which here grant everything to every
// role (https://www.postgresql.org/docs/current/ddl-rowsecurity.html): the rest roles get exactly
// their predicates, other roles keep their access, and the planner sees each predicate as a plain
// conjunct it can match to an index — an OR with a per-role term or a CASE over the action would
// hide `user_id = …` from it and turn an index scan into a filter over the whole table.
//
// A subquery of another table's policy reads this table through its SELECT policy, with the
// request's rest.action; docs/policy-language.md says it sees the rows of this table's read policy. So when some
// subquery reads this table and the predicates differ per action, the read arm also serves every
// request on another table (`rest.table` is not this one) and the others only requests on this
// one. Unset settings still deny: `NULL <> 'x'` is not TRUE. Only with `schema` (a runtime that
// serves subqueries, and sets rest.table): without it policies with subqueries deny anyway.
export function compileRls(input: RlsInput): string[] {
  if (input.roles.length === 0) throw new Error('compileRls: at least one role is needed');
  const q = postgresDialect.quoteIdent;
  const set =
    'policyFor' in input.policies ? input.policies : compilePolicySet(input.policies, postgresDialect);
  const predicate = (action: Action): string =>
    nativePredicateSql(set.policyFor(input.table, action, input.columns, input.schema), input.columns);
  const table = q(input.table);
  const to = input.roles.map(q).join(', ');
  // Actions that share a predicate share one arm, so the common case (one policy for every
  // action) is `action IN (…) AND <predicate>`.
  const byPredicate = new Map<string, Action[]>();
  for (const action of SELECT_ACTIONS) {
    const p = predicate(action);
    const actions = byPredicate.get(p);
    if (actions === undefined) byPredicate.set(p, [action]);
    else actions.push(action);
  }
  const readBySubqueries =
    input.schema !== undefined && set.subqueryTables.has(input.table) && byPredicate.size > 1;
  const thisTable = postgresLiteral(input.table);
  // The whole test on the settings is one `(select …)`: PostgreSQL computes it once per statement
  // (an InitPlan) and compares one integer per row. Written as `(select action) IN (…)`, only the
  // setting was computed once and the IN list was compared on every row the scan read, which
  // measured some 25 µs of a 250 µs owner read of 200 rows. It is an equality, not the bare boolean
  // InitPlan, because of what the planner estimates: a bare boolean passes half the rows, an
  // equality with an unknown side 0.5% (DEFAULT_EQ_SEL), which is what a caller's share of a served
  // table usually is. Estimated at half, a team read (`team_id = ANY (ARRAY(SELECT …))`) walked the
  // primary key through ten thousand rows instead of the team_id index, at 2.5× the PostgreSQL CPU
  // (docs/performance.md). NULL (a setting unset) and false give NULL, which denies.
  const selector = (actions: readonly Action[]): string => {
    const byAction = `${actionSettingSql} IN (${actions.map((a) => `'${a}'`).join(', ')})`;
    const test = !readBySubqueries
      ? byAction
      : actions.includes('read')
        ? `${byAction} OR ${tableSettingSql} <> ${thisTable}`
        : `${byAction} AND ${tableSettingSql} = ${thisTable}`;
    return `(select case when ${test} then 1 end) = 1`;
  };
  const arms = [...byPredicate]
    .filter(([p]) => p !== 'false')
    .map(([p, actions]) => `(${selector(actions)} AND ${p})`);
  const selectUsing = arms.length === 0 ? 'false' : arms.join(' OR ');

  const policies: readonly [RlsCommand, string][] = [
    ['select', `AS RESTRICTIVE FOR SELECT TO ${to} USING (${selectUsing})`],
    ['insert', `AS RESTRICTIVE FOR INSERT TO ${to} WITH CHECK (${predicate('create')})`],
    [
      'update',
      `AS RESTRICTIVE FOR UPDATE TO ${to} USING (${predicate('update')}) WITH CHECK (${predicate('update')})`,
    ],
    ['delete', `AS RESTRICTIVE FOR DELETE TO ${to} USING (${predicate('delete')})`],
    ['others', 'AS PERMISSIVE FOR ALL TO PUBLIC USING (true) WITH CHECK (true)'],
  ];
  return [
    `ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY`,
    ...policies.flatMap(([command, body]) => {
      const name = q(rlsPolicyName(input.table, command));
      return [`DROP POLICY IF EXISTS ${name} ON ${table}`, `CREATE POLICY ${name} ON ${table} ${body}`];
    }),
  ];
}
