// The policy compiler's library API: what the runtime, the CLI and the tests use.

export { parsePolicy } from '../grammar/parse-policy.js';
export { printPolicy } from '../grammar/print-policy.js';
export { PolicySyntaxError, formatPolicyError } from '../grammar/policy-syntax-error.js';
export type { Expr } from '../grammar/ast.js';

export { ACTIONS, ANONYMOUS, POLICY_ACTIONS, isPolicyAction } from './types.js';
export type {
  Action,
  AuthUser,
  ColumnType,
  ColumnTypes,
  DialectName,
  PolicyAction,
  PolicyRow,
} from './types.js';

export { resolvePolicies } from './resolve.js';
export type { CandidateTrace, Resolution, ResolutionLevel } from './resolve.js';

export { analyze, policyProblemError } from './analyze.js';
export type { Analysis, PolicyProblem } from './analyze.js';
export type { RelationContext, SchemaTypes } from './scope.js';
export { findCycles, subqueryTablesOf } from './cycles.js';
export type { CycleReport, PolicyCycle, SubqueryTable } from './cycles.js';

export { parseColumnRule, ALL_COLUMNS, MAX_COLUMN_RULE_LENGTH } from '../grammar/column-rule.js';
export type { ColumnName, ColumnRule } from '../grammar/column-rule.js';
export { printColumnName, printColumnRule } from '../grammar/print-column-rule.js';
export {
  grantsColumn,
  readableColumns,
  unknownColumnsOf,
  validateColumnRule,
  writableColumns,
} from './columns.js';
export type {
  ColumnAccess,
  ColumnAccessInput,
  ColumnGrant,
  ReadAccess,
  RowCondition,
  UnknownColumn,
  WriteAccess,
} from './columns.js';

export { findEscalations, innerWrites, mayAllowNonAdmin } from './escalations.js';
export type { EscalationAction, EscalationWarning } from './escalations.js';

export { evaluate } from './evaluate.js';
export type { RowVerdict } from './evaluate.js';

export { compileToSql } from './sql/compile-predicate.js';
export type { CompileOptions } from './sql/compile-predicate.js';
export { PARAMETER_BINDING } from './sql/auth-binding.js';
export type { AuthBinding } from './sql/auth-binding.js';
export { dialects } from './sql/dialects.js';
export { mysqlDialect } from './sql/mysql-dialect.js';
export { postgresDialect } from './sql/postgres-dialect.js';
export { sqliteDialect } from './sql/sqlite-dialect.js';
export type { Dialect } from './sql/dialect.js';
export { renderInlinePostgres, renderSql, SqlBuilder } from './sql/fragment.js';
export type { AuthSlot, RenderedSql, SqlFragment } from './sql/fragment.js';

export { compilePolicySet, ownerColumnsOf } from './policy-set.js';
export type { CompiledPolicy, Decision, ParsedPolicy, PolicyIssue, PolicySet } from './policy-set.js';

export { compileRls, nativePredicateSql, rlsPolicyName, rlsPolicyNames } from './rls/compile-rls.js';
export type { RlsCommand, RlsInput } from './rls/compile-rls.js';
export {
  SESSION_BINDING,
  SESSION_SETTINGS,
  TABLE_SETTING,
  sessionSettingValues,
} from './rls/session-settings.js';
export type { SessionSetting } from './rls/session-settings.js';
