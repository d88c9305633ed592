// How one request would be decided (`rest policy explain`): every candidate row and why it was or
// was not chosen, the parsed expression, the predicate bound for the user, the RLS DDL on
// PostgreSQL, and the decision — taken by the server's own authorizer for the configured path
// (runtime/enforce), with the 401-vs-403 rule and the error body of runtime/enforce/denials.ts —
// and, given a row's key, what the policy makes of that stored row (runtime/explain-row.ts).

import {
  compilePolicySet,
  nativePredicateSql,
  printPolicy,
  renderSql,
  rlsPolicyName,
  sessionSettingValues,
  type Action,
  type AuthUser,
  type CompiledPolicy,
  type DialectName,
  type Expr,
  type PolicyIssue,
  type PolicyRow,
  type PolicySet,
  type ResolutionLevel,
  type SqlFragment,
} from '../../compiler/index.js';
import type { ErrorDetails, RestError } from '../../errors/rest-error.js';
import type { DbAdapter, DbSession, SchemaSnapshot, TableInfo } from '../db/adapter.js';
import type { Authorization, AuthorizationRequest, Authorizer, PolicySource } from '../enforce/authorizer.js';
import { policyColumnTypes, schemaTypesOf } from '../enforce/decide.js';
import { checkFailed, denialStatus, policyDenied } from '../enforce/denials.js';
import { createNativeAuthorizer } from '../enforce/native-authorizer.js';
import { createPortableAuthorizer } from '../enforce/portable-authorizer.js';
import { explainColumns, type ColumnsExplanation } from './explain-columns.js';
import { explainRow, type RowExplanation } from './explain-row.js';
import { brokenPolicies, escalationsAmong, type PolicyEscalation } from '../policies/policy-service.js';
import { indexWarning, type IndexedColumns } from '../policies/relation-health.js';
import { floorWarning } from '../enforce/auth-users-floor.js';
import { tableDdl } from '../rls/rls-ddl.js';

export interface CandidateExplanation extends PolicyRow {
  readonly chosen: boolean;
  readonly reason: string;
  /** The canonical text of the parsed expression (printPolicy), or null when it does not parse. */
  readonly parsed: string | null;
  /** The row is broken (policy-service.ts brokenPolicies): it allows nothing until fixed. */
  readonly broken: boolean;
  /** Why it is broken: it does not parse, names a missing table or column, closes a cycle…; null when not. */
  readonly error: string | null;
}

/** A table the policy's subqueries read (docs/policy-language.md). */
export interface RelationExplanation {
  readonly table: string;
  /** Its columns the subqueries name. */
  readonly columns: readonly string[];
  /**
   * Its own read policy for this user, which the subquery sees it through (inlined into the
   * subquery on the portable path, the table's RLS natively), in canonical text; null when the
   * table has none the compiler could use (then the subquery sees no row).
   */
  readonly read_policy: string | null;
  /** Why the subquery is slow (no index on any column it names of the table); null when it is not, or not looked up. */
  readonly index_warning: string | null;
}

export interface BoundSql {
  readonly sql: string;
  readonly values: readonly unknown[];
}

export interface SessionSettingValue {
  readonly name: string;
  readonly value: string;
}

/** Portable create/update: the condition the database evaluates on every row as it stored it. */
export interface StoredRowCheck extends BoundSql {
  readonly reason: string;
}

/** Native create/update: the WITH CHECK of the table's generated policy for the command. */
export interface RlsCheck {
  /** The name of the generated policy (`rest_<table>_insert` or `rest_<table>_update`). */
  readonly policy: string;
  readonly sql: string;
  readonly reason: string;
}

export type ExplainDecision =
  | { readonly kind: 'allow'; readonly reason: string }
  | {
      readonly kind: 'deny';
      readonly status: 401 | 403;
      readonly reason: string;
      /** The error body the server answers with. */
      readonly error: { readonly code: string; readonly message: string; readonly details?: ErrorDetails };
    }
  /** Portable path: the predicate is AND-ed into the statement's WHERE with these bound values. */
  | ({
      readonly kind: 'filter';
      readonly enforced_by: 'where';
      readonly reason: string;
      readonly check?: StoredRowCheck;
    } & BoundSql)
  /** Native path: the table's RLS policy filters, reading auth_user from these session settings. */
  | {
      readonly kind: 'filter';
      readonly enforced_by: 'rls';
      readonly reason: string;
      readonly sql: string;
      readonly settings: readonly SessionSettingValue[];
      readonly check?: RlsCheck;
    };

export interface PolicyExplanation {
  readonly database: DialectName;
  readonly table: string;
  readonly action: Action;
  readonly user: AuthUser;
  /** Auth is enabled in this configuration (a secret is set); without it the server ignores policies. */
  readonly auth_enabled: boolean;
  /** PostgreSQL with -db.rls on: the database enforces the policies natively. */
  readonly native_rls: boolean;
  readonly level: ResolutionLevel;
  readonly matched_action: string | null;
  readonly steps: readonly string[];
  readonly candidates: readonly CandidateExplanation[];
  /** The chosen rows that parse and type-check, OR-ed, in canonical text; `false` when none. */
  readonly expression: string;
  readonly ast: Expr;
  readonly issues: readonly PolicyIssue[];
  readonly missing_columns: readonly string[];
  /** The tables its subqueries read, in order of first appearance. */
  readonly relations: readonly RelationExplanation[];
  /** The whole expression as this database's WHERE predicate, with auth_user bound for the user. */
  readonly predicate: BoundSql;
  /** PostgreSQL only: the row-level security DDL of this table, as the server applies it. */
  readonly rls_ddl: readonly string[] | null;
  readonly decision: ExplainDecision;
  /** `--row <pk>`: what the policy makes of that stored row; null without one. */
  readonly row: RowExplanation | null;
  /** What to keep in mind beyond the decision (the floor on auth_users, docs/authentication.md). */
  readonly warnings: readonly string[];
  /**
   * Escalations (docs/policy-language.md) that concern this request: a chosen row grants access
   * through an inner table non-admins can write, or this request is such a write.
   */
  readonly escalations: readonly PolicyEscalation[];
  /** The columns the user may read, and write by create and update (docs/policy-language.md "Columns"). */
  readonly columns: ColumnsExplanation;
}

export interface ExplainInput {
  readonly rows: readonly PolicyRow[];
  readonly table: TableInfo;
  /** The schema `table` belongs to: subqueries read its other tables. */
  readonly schema: SchemaSnapshot;
  readonly action: Action;
  readonly user: AuthUser;
  readonly adapter: Pick<DbAdapter, 'kind' | 'dialect'>;
  /** The key of a stored row to judge, and the database to read it from (`--row <pk>`). */
  readonly row?: { readonly key: string; readonly db: DbSession };
  readonly authEnabled: boolean;
  readonly nativeRls: boolean;
  /** The role the generated policies are for (PostgreSQL only). */
  readonly rlsRole: string | undefined;
  /** The indexed columns of the database (runtime/policies/relation-health.ts); absent: not looked up. */
  readonly indexes?: IndexedColumns;
}

const bound = (sql: { readonly text: string; readonly values: readonly unknown[] }): BoundSql => ({
  sql: sql.text,
  values: sql.values,
});

/** Why the in-process decision is what it is, in one sentence. */
function decisionReason(kind: Authorization['kind'], policy: CompiledPolicy, user: AuthUser): string {
  const missing = policy.missingColumns[0];
  if (missing !== undefined) {
    const who = user.is_authenticated ? '' : '; an anonymous user is told to log in first';
    return `the policy names column '${missing}', which table '${policy.table}' lacks${who}`;
  }
  if (policy.resolution.rows.length === 0)
    return `no policy row covers table '${policy.table}' and action '${policy.action}'`;
  switch (kind) {
    case 'allow':
      return 'auth_user alone makes the expression TRUE, whatever the row';
    case 'filter':
      return 'allowed on the rows where the predicate is TRUE';
    case 'deny':
      return policy.issues.length === policy.resolution.rows.length
        ? 'no chosen row is a valid expression for this table'
        : 'auth_user alone makes the expression FALSE or unknown, whatever the row';
  }
}

/** How a refused write answers: the status and code of runtime/enforce/denials.ts's checkFailed. */
const refusedWrite = (error: RestError, user: AuthUser): string => `deny ${denialStatus(user)} ${error.code}`;

/** create: owner columns the body leaves out are filled with the user's id; another id is refused. */
function ownerSentence(policy: CompiledPolicy, action: Action): string {
  if (action !== 'create' || policy.ownerColumns.length === 0) return '';
  const columns = policy.ownerColumns.map((c) => `'${c}'`).join(', ');
  return `; before that, ${columns} left out of the body is filled with the user's id and another id is refused (deny 403 owner_mismatch)`;
}

/** What judges the rows a create or update writes, on either path; undefined for other actions. */
function writeCheckReason(input: ExplainInput, policy: CompiledPolicy, judge: string): string | undefined {
  const { action, user, table } = input;
  if (action !== 'create' && action !== 'update') return undefined;
  const rows = action === 'create' ? 'every new row' : 'every changed row';
  const refusal = refusedWrite(checkFailed(user, table.name, action, undefined), user);
  return `${rows} must make it TRUE as the database stored it (defaults, coercions and triggers applied): ${judge}, inside the write's transaction, and a row that fails rolls the whole request back (${refusal})${ownerSentence(policy, action)}`;
}

/** The portable authorizer's filter: its predicate bound for the user, and its create/update check. */
function portableFilter(
  authorization: Extract<Authorization, { kind: 'filter' }>,
  policy: CompiledPolicy,
  input: ExplainInput,
): ExplainDecision {
  const render = (fragment: SqlFragment) => bound(renderSql(input.adapter.dialect, fragment, input.user));
  const reason = writeCheckReason(input, policy, 'the database evaluates it on each row it wrote');
  const check =
    authorization.check === undefined || reason === undefined
      ? {}
      : { check: { ...render(authorization.check), reason } };
  return {
    kind: 'filter',
    enforced_by: 'where',
    reason: decisionReason('filter', policy, input.user),
    ...render(authorization.predicate),
    ...check,
  };
}

/** The native path past the in-process step: the table's RLS policy filters, its WITH CHECK judges. */
function rlsFilter(policy: CompiledPolicy, input: ExplainInput): ExplainDecision {
  const { table, action, user } = input;
  const sql = nativePredicateSql(policy, policyColumnTypes(table));
  const command = action === 'create' ? 'insert' : 'update';
  const name = rlsPolicyName(table.name, command);
  const reason = writeCheckReason(input, policy, `the WITH CHECK of policy '${name}' judges it`);
  return {
    kind: 'filter',
    enforced_by: 'rls',
    reason: "allowed on the rows the table's row-level security policy lets through",
    sql,
    settings: sessionSettingValues(user, action, table.name),
    ...(reason === undefined ? {} : { check: { policy: name, sql, reason } }),
  };
}

/** The server's authorizer for this path, deciding from `compiled`; explain syncs no RLS. */
function serverAuthorizer(compiled: PolicySet, nativeRls: boolean): Authorizer {
  const policies: PolicySource = { get: async () => ({ compiled }) };
  return nativeRls
    ? createNativeAuthorizer({ policies, rls: { ensure: async () => {} } })
    : createPortableAuthorizer({ policies });
}

async function decide(set: PolicySet, policy: CompiledPolicy, input: ExplainInput): Promise<ExplainDecision> {
  const { table, action, user, schema } = input;
  const request: AuthorizationRequest = { table, action, user, schema };
  const authorization = await serverAuthorizer(set, input.nativeRls).authorize(request);
  if (authorization.kind === 'deny') {
    return {
      kind: 'deny',
      status: denialStatus(user),
      reason: decisionReason('deny', policy, user),
      error: policyDenied(user, table.name, authorization.reason).toBody().error,
    };
  }
  if (input.nativeRls) {
    // The native authorizer lets every request it does not deny reach the database, whose policy
    // judges the rows; when auth_user alone makes the expression TRUE, that policy passes them all.
    return policy.decide(user).kind === 'allow'
      ? { kind: 'allow', reason: decisionReason('allow', policy, user) }
      : rlsFilter(policy, input);
  }
  return authorization.kind === 'allow'
    ? { kind: 'allow', reason: decisionReason('allow', policy, user) }
    : portableFilter(authorization, policy, input);
}

export async function explainPolicy(input: ExplainInput): Promise<PolicyExplanation> {
  const set = compilePolicySet(input.rows, input.adapter.dialect);
  const policy = set.policyFor(
    input.table.name,
    input.action,
    policyColumnTypes(input.table),
    schemaTypesOf(input.schema),
  );
  const parsed = new Map(set.policies.map((p) => [p.row.id, p] as const));
  const broken = brokenPolicies(input.rows, input.schema);
  const candidates = policy.resolution.candidates.map((c): CandidateExplanation => {
    const p = parsed.get(c.row.id);
    const problem = broken.get(c.row.id)?.message ?? (p?.ok === false ? p.error.message : undefined);
    return {
      ...c.row,
      chosen: c.chosen,
      reason: c.reason,
      parsed: p?.ok === true ? printPolicy(p.expr) : null,
      broken: problem !== undefined,
      error: problem ?? null,
    };
  });
  const chosen = new Set(policy.resolution.rows.map((r) => r.id));
  const escalations = escalationsAmong(input.rows, input.schema, broken).filter(
    (w) =>
      chosen.has(w.relation_policy_id) ||
      (w.table === input.table.name && w.action === input.action && chosen.has(w.policy_id)),
  );
  const decision = await decide(set, policy, input);
  const floor =
    input.action === 'create' || input.action === 'update'
      ? floorWarning(
          { table_name: input.table.name, action: input.action },
          policy.expr,
          policyColumnTypes(input.table),
        )
      : undefined;
  const row =
    input.row === undefined
      ? null
      : await explainRow({
          key: input.row.key,
          db: input.row.db,
          adapter: input.adapter,
          table: input.table,
          action: input.action,
          user: input.user,
          policy,
          parsed,
          denied: decision.kind === 'deny' ? decision : undefined,
        });
  return {
    warnings: floor === undefined ? [] : [floor],
    escalations,
    database: input.adapter.kind,
    table: input.table.name,
    action: input.action,
    user: input.user,
    auth_enabled: input.authEnabled,
    native_rls: input.nativeRls,
    level: policy.resolution.level,
    matched_action: policy.resolution.matchedAction ?? null,
    steps: policy.resolution.steps,
    candidates,
    expression: printPolicy(policy.expr),
    ast: policy.expr,
    issues: policy.issues,
    missing_columns: policy.missingColumns,
    relations: [...policy.relations].map(([table, columns]) => {
      const inner = policy.inlined.get(table);
      const slow = input.indexes === undefined ? undefined : indexWarning(table, columns, input.indexes);
      return {
        table,
        columns,
        read_policy: inner === undefined ? null : printPolicy(inner.expr),
        index_warning: slow ?? null,
      };
    }),
    predicate: bound(renderSql(input.adapter.dialect, policy.predicate, input.user)),
    rls_ddl:
      input.rlsRole === undefined ? null : tableDdl(input.table, set, input.rlsRole, input.schema).statements,
    decision,
    row,
    columns: explainColumns(set, input.table, input.schema, input.user),
  };
}
