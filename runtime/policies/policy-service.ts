// Rows of `auth_policies`: validation (docs/policy-language.md), insertion and listing — the one code path
// the CLI (`auth policy add|list`) and the HTTP side (`/auth_policies` writes) share.

import { analyze } from '../../compiler/analyze.js';
import { validateColumnRule } from '../../compiler/columns.js';
import { parseColumnRule, type ColumnRule } from '../../grammar/column-rule.js';
import type { ColumnTypes } from '../../compiler/types.js';
import { findCycles } from '../../compiler/cycles.js';
import { findEscalations, type EscalationAction } from '../../compiler/escalations.js';
import { isPolicyAction, POLICY_ACTIONS, type PolicyAction, type PolicyRow } from '../../compiler/types.js';
import { quoteValue } from '../../errors/quote-value.js';
import { RestError } from '../../errors/rest-error.js';
import {
  children,
  visit,
  type ColumnNode,
  type Expr,
  type Position,
  type TableRef,
} from '../../grammar/ast.js';
import { parsePolicy } from '../../grammar/parse-policy.js';
import { PolicySyntaxError } from '../../grammar/policy-syntax-error.js';
import { SqlBuilder, renderSql } from '../../compiler/sql/fragment.js';
import type { DbAdapter, DbSession, Row, SchemaSnapshot } from '../db/adapter.js';
import { AUTH_POLICIES_TABLE, INTERNAL_TABLES } from '../auth/auth-ddl.js';
import { isSecretColumn } from '../auth/secret-columns.js';
import { schemaTypesOf } from '../enforce/decide.js';
import { floorWarning } from '../enforce/auth-users-floor.js';

/** `table_name` value whose rows apply to every table (docs/policy-language.md). */
export const ALL_TABLES = 'all';

/** Maximum lengths in characters, from the column types of docs/authentication.md. */
export const POLICY_FIELD_LIMITS = Object.freeze({
  table_name: 128,
  action: 16,
  expression: 128,
  description: 256,
});
export type PolicyField = keyof typeof POLICY_FIELD_LIMITS;
const POLICY_FIELDS = Object.keys(POLICY_FIELD_LIMITS) as readonly PolicyField[];

/** The nullable field of a policy: its column rule (docs/policy-language.md "Columns"). */
export const COLUMNS_FIELD = 'columns';

/** A policy as written by a user; fields are checked, not trusted. */
export type PolicyInput = { readonly [F in PolicyField | typeof COLUMNS_FIELD]?: unknown };

export interface ValidatedPolicy {
  readonly table_name: string;
  readonly action: PolicyAction;
  readonly expression: string;
  readonly description: string;
  /** The column rule as it is stored: NULL when it grants every column (absent, empty, `*`). */
  readonly columns: string | null;
  /** The parsed expression (callers must not parse again). */
  readonly expr: Expr;
  readonly rule: ColumnRule;
}

const invalidPolicy = (
  message: string,
  field: PolicyField,
  extra: Readonly<Record<string, unknown>> = {},
): RestError => new RestError('invalid_policy', message, { details: { field, ...extra } });

/** Characters as PostgreSQL and MySQL count them for varchar(n): code points. */
const characterCount = (s: string): number => [...s].length;

function stringField(input: PolicyInput, field: PolicyField): string {
  const value = input[field];
  if (typeof value !== 'string') throw invalidPolicy(`${field} must be a string`, field);
  const limit = POLICY_FIELD_LIMITS[field];
  if (characterCount(value) > limit) {
    throw invalidPolicy(`${field} must be at most ${limit} characters long`, field, { max_length: limit });
  }
  return value;
}

function columnNodes(expr: Expr): readonly ColumnNode[] {
  const found: ColumnNode[] = [];
  const walk = (e: Expr): void =>
    visit<void>(e, {
      anyone: () => {},
      or: (n) => n.operands.forEach(walk),
      and: (n) => n.operands.forEach(walk),
      not: (n) => walk(n.operand),
      compare: (n) => {
        walk(n.left);
        walk(n.right);
      },
      is_null: (n) => walk(n.operand),
      in: (n) => {
        walk(n.operand);
        n.values.forEach(walk);
      },
      column: (n) => void found.push(n),
      // Subqueries read other tables: compiler/analyze.ts checks them against the whole schema.
      qualified_column: () => {},
      exists: () => {},
      in_select: (n) => walk(n.operand),
      auth: () => {},
      claim: () => {},
      literal: () => {},
    });
  walk(expr);
  return found;
}

/** An error located in the expression, rendered by the CLI with a caret like a syntax error. */
const expressionError = (
  message: string,
  pos: Position,
  expected: string,
  found: string,
): PolicySyntaxError =>
  new PolicySyntaxError(`${message} at ${pos.line}:${pos.column}`, pos, expected, found);

/** The value types of a table's columns, as the compiler wants them. */
export function columnTypesOf(schema: SchemaSnapshot, table: string): ColumnTypes | undefined {
  const info = schema.tables.get(table);
  if (info === undefined) return undefined;
  return new Map(info.columns.map((c) => [c.name, c.type] as const));
}

/** The id a candidate policy takes while cycles are looked for among it and the stored rows. */
const CANDIDATE_ID = -1;

/** A policy row's expression for findCycles; one that does not parse reads nothing. */
function parsedOrUndefined(row: PolicyRow): Expr | undefined {
  try {
    return parsePolicy(row.expression);
  } catch (e) {
    if (e instanceof PolicySyntaxError) return undefined;
    throw e;
  }
}

/** Refuses a candidate whose subqueries close a cycle with `others` (docs/policy-language.md), naming the cycle. */
function refuseCycles(
  candidate: Omit<PolicyRow, 'id'>,
  expr: Expr,
  others: readonly PolicyRow[],
  schema: SchemaSnapshot,
): void {
  const rows = [...others, { ...candidate, id: CANDIDATE_ID }];
  const report = findCycles(rows, schema.tables.keys(), (row) =>
    row.id === CANDIDATE_ID ? expr : parsedOrUndefined(row),
  );
  const cycle = report.cycles.find((c) => c.policyIds.includes(CANDIDATE_ID));
  if (cycle === undefined) return;
  const partners = [...new Set(cycle.policyIds.filter((id) => id !== CANDIDATE_ID))];
  const withRows =
    partners.length === 0 ? '' : ` (with polic${partners.length === 1 ? 'y' : 'ies'} ${partners.join(', ')})`;
  throw expressionError(
    `the policy's subqueries make a cycle: ${cycle.path}${withRows}; a table's policy cannot read, through subqueries, a table whose policy reads it back`,
    expr.pos,
    'subqueries that do not lead back to this table',
    'a cycle',
  );
}

/**
 * Why a policy cannot name `table` (SPEC §3.2's tables that are not served), or undefined: the
 * server's own tables, and those the schema holds but does not serve (a partition or an
 * inheritance child, reached only through its parent).
 */
function unservedReason(table: string, schema: SchemaSnapshot): string | undefined {
  if (INTERNAL_TABLES.has(table)) return `table '${table}' is internal to rest and is not served`;
  return schema.unserved?.get(table);
}

/** The table of every subquery, nested ones included, in source order. */
function subqueryTables(expr: Expr): readonly TableRef[] {
  const own = expr.kind === 'exists' || expr.kind === 'in_select' ? [expr.from] : [];
  return [...own, ...children(expr).flatMap(subqueryTables)];
}

/** No subquery reads a table that is not served. */
function checkSubqueryTables(expr: Expr, schema: SchemaSnapshot): void {
  for (const from of subqueryTables(expr)) {
    const reason = unservedReason(from.name, schema);
    if (reason !== undefined) {
      throw expressionError(
        `${reason}: a policy cannot read it`,
        from.pos,
        'a served table',
        `'${from.name}'`,
      );
    }
  }
}

/** The expression's columns exist in `table_name` (unless `all`) and are not secret. */
function checkColumns(expr: Expr, table_name: string, columns: ColumnTypes | undefined): void {
  for (const column of columnNodes(expr)) {
    if (columns !== undefined && !columns.has(column.name)) {
      throw expressionError(
        `column '${column.name}' does not exist in table '${table_name}'`,
        column.pos,
        `a column of table '${table_name}'`,
        `'${column.name}'`,
      );
    }
    if (isSecretColumn(table_name, column.name)) {
      throw expressionError(
        `column '${column.name}' of table '${table_name}' cannot be used in a policy`,
        column.pos,
        'a column that is not secret',
        `'${column.name}'`,
      );
    }
  }
}

/** The `columns` field: absent or null (every column), else text; anything else is refused. */
function columnsField(input: PolicyInput): string | null {
  const value = input[COLUMNS_FIELD];
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') {
    throw new RestError('invalid_policy', `${COLUMNS_FIELD} must be a string or null`, {
      details: { field: COLUMNS_FIELD },
    });
  }
  return value;
}

/**
 * A `columns` value as a write stores it: a rule that grants every column (empty, blank, `*`) is
 * stored as NULL, so that "every column" has one stored form; anything else as written (it is
 * validated with the row).
 */
export function storedColumnsValue(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return parseColumnRule(value).kind === 'all' ? null : value;
  } catch (e) {
    if (e instanceof PolicySyntaxError) return value;
    throw e;
  }
}

/**
 * The column rule of a row for `table_name` (compiler/columns.ts): its errors are the expression's
 * (line:column, expected, found), said to be in `columns`.
 */
function checkColumnRule(
  text: string | null,
  table_name: string,
  columns: ColumnTypes | undefined,
): ColumnRule {
  try {
    return validateColumnRule(text, table_name, columns);
  } catch (e) {
    if (!(e instanceof PolicySyntaxError)) throw e;
    const message = e.message.startsWith(`${COLUMNS_FIELD} `) ? e.message : `${COLUMNS_FIELD}: ${e.message}`;
    throw new PolicySyntaxError(message, e, e.expected, e.found, COLUMNS_FIELD);
  }
}

/**
 * What a row means, checked against `schema` (docs/policy-language.md without the lengths and cycles): the action
 * is in the list, `table_name` exists or is `all`, the expression parses, names existing columns
 * and type-checks, and its subqueries name existing tables and columns.
 */
function checkRule(
  table_name: string,
  action: string,
  expression: string,
  columnsText: string | null,
  schema: SchemaSnapshot,
): { readonly action: PolicyAction; readonly expr: Expr; readonly rule: ColumnRule } {
  if (!isPolicyAction(action)) {
    throw invalidPolicy(`action ${quoteValue(action)} is not one of ${POLICY_ACTIONS.join(', ')}`, 'action', {
      allowed: POLICY_ACTIONS,
    });
  }
  const unserved = unservedReason(table_name, schema);
  if (unserved !== undefined) throw invalidPolicy(`${unserved}: a policy cannot name it`, 'table_name');
  const columns = table_name === ALL_TABLES ? undefined : columnTypesOf(schema, table_name);
  if (table_name !== ALL_TABLES && columns === undefined) {
    throw invalidPolicy(`table ${quoteValue(table_name)} does not exist`, 'table_name');
  }
  const expr = parsePolicy(expression);
  checkSubqueryTables(expr, schema);
  checkColumns(expr, table_name, columns);
  const context =
    table_name === ALL_TABLES
      ? { schema: schemaTypesOf(schema) }
      : { table: table_name, schema: schemaTypesOf(schema) };
  const analysis = analyze(expr, columns, context);
  // An outer-row reference (`docs.owner_id` inside a subquery) must name a column of this table.
  const problem = analysis.problems[0] ?? analysis.missingAt[0];
  if (problem !== undefined) {
    throw expressionError(problem.message, problem.pos, 'a well-typed condition', 'this expression');
  }
  return { action, expr, rule: checkColumnRule(columnsText, table_name, columns) };
}

/**
 * docs/policy-language.md: action in the list, lengths of §2, `table_name` an existing table or `all`, the
 * expression parses, every column it names exists in that table (for `all`: checked per table at
 * request time), every table and column of a subquery exists, the column rule parses and names
 * columns of that table (for `all`: names a table lacks are ignored), and — given the other stored rows,
 * `others` — its subqueries close no cycle. Throws 400 `invalid_policy`; syntax, column and cycle
 * errors are `PolicySyntaxError`s carrying line:column and what was expected.
 */
export function validatePolicy(
  input: PolicyInput,
  schema: SchemaSnapshot,
  others: readonly PolicyRow[] = [],
): ValidatedPolicy {
  const [table_name, actionText, expression, description] = POLICY_FIELDS.map((f) =>
    stringField(input, f),
  ) as [string, string, string, string];
  const columnsText = columnsField(input);
  const { action, expr, rule } = checkRule(table_name, actionText, expression, columnsText, schema);
  const columns = rule.kind === 'all' ? null : columnsText;
  refuseCycles({ table_name, action, expression, description, columns }, expr, others, schema);
  return Object.freeze({ table_name, action, expression, description, columns, expr, rule });
}

/**
 * Why a stored row allows nothing: `invalid` — validation would refuse it now (edited by hand in
 * the database, or the schema changed under it: it does not parse, names a missing table or column,
 * an unknown action…); `cycle` — its subqueries close a cycle with other rows. The compiler treats
 * such a row as FALSE (fail closed) and never runs it.
 */
export interface BrokenPolicy {
  readonly kind: 'invalid' | 'cycle';
  readonly message: string;
}

/** The stored rows that are broken against `schema`, by id. */
export function brokenPolicies(
  rows: readonly PolicyRow[],
  schema: SchemaSnapshot,
): ReadonlyMap<number, BrokenPolicy> {
  const broken = new Map<number, BrokenPolicy>();
  const parsed = new Map<PolicyRow, Expr>();
  for (const row of rows) {
    try {
      parsed.set(row, checkRule(row.table_name, row.action, row.expression, row.columns, schema).expr);
    } catch (e) {
      if (!(e instanceof PolicySyntaxError) && !(e instanceof RestError)) throw e;
      broken.set(row.id, Object.freeze({ kind: 'invalid', message: e.message }));
    }
  }
  for (const cycle of findCycles(rows, schema.tables.keys(), (row) => parsed.get(row)).cycles) {
    for (const id of cycle.policyIds) {
      if (!broken.has(id)) {
        broken.set(
          id,
          Object.freeze({ kind: 'cycle', message: `its subqueries make a cycle: ${cycle.path}` }),
        );
      }
    }
  }
  return broken;
}

/** A stored row as the drivers return it, with the types of docs/authentication.md. */
export function policyRowOf(row: Row): PolicyRow {
  return Object.freeze({
    id: Number(row['id']),
    table_name: String(row['table_name']),
    action: String(row['action']),
    expression: String(row['expression']),
    description: String(row['description']),
    // Absent before the upgrade that adds it (a read-only command on an older database): every column.
    columns: row['columns'] === null || row['columns'] === undefined ? null : String(row['columns']),
  });
}

/** Validates and inserts one policy; returns the stored row. Nothing is written when invalid. */
/**
 * What a valid policy row should still make its author think twice about (printed by `auth policy
 * add`): a policy that lets non-admins write auth_users, whose admin-only columns stay admin-only.
 */
export function policyWarnings(row: PolicyRow, schema: SchemaSnapshot): readonly string[] {
  const expr = parsePolicy(row.expression);
  const warning = floorWarning(row, expr, columnTypesOf(schema, row.table_name));
  return warning === undefined ? [] : [warning];
}

export async function addPolicy(
  adapter: DbAdapter,
  schema: SchemaSnapshot,
  input: PolicyInput,
): Promise<PolicyRow> {
  const policy = validatePolicy(input, schema, await listPolicies(adapter));
  const fields = ['table_name', 'action', 'expression', 'description', COLUMNS_FIELD] as const;
  const b = new SqlBuilder(adapter.dialect)
    .append('INSERT INTO ')
    .appendIdent(AUTH_POLICIES_TABLE)
    .append(' (')
    .append(fields.map((f) => adapter.dialect.quoteIdent(f)).join(', '))
    .append(') VALUES (');
  fields.forEach((f, i) => {
    if (i > 0) b.append(', ');
    b.appendValue(policy[f]);
  });
  b.append(')');
  // Without INSERT … RETURNING (MySQL) the driver reports insertId.
  if (adapter.returning.insert) b.append(' RETURNING ').appendIdent('id');
  const result = await adapter.query(renderSql(adapter.dialect, b.build()));
  const id = result.rows[0]?.['id'] ?? result.insertId;
  return policyRowOf({ ...policy, id });
}

// Written without the dialect's quoting: the guard of `/auth_policies` writes lists the rows inside
// the write's transaction, where only the session is at hand, and these fixed lower-case names are
// plain identifiers in SQLite, MySQL/MariaDB and PostgreSQL alike. `*`: a database set up by an
// older version has no `columns` until a server or a writing command upgrades it (policyRowOf).
const STORED_POLICIES_SQL = `SELECT * FROM ${AUTH_POLICIES_TABLE} ORDER BY id`;

/** Every policy row, by id, as `session` (a write's transaction) sees them. */
export async function policiesIn(session: DbSession): Promise<readonly PolicyRow[]> {
  const result = await session.query({ text: STORED_POLICIES_SQL, values: [] });
  return Object.freeze(result.rows.map(policyRowOf));
}

/** Every policy row, by id. */
export async function listPolicies(
  session: DbSession & Pick<DbAdapter, 'dialect'>,
): Promise<readonly PolicyRow[]> {
  const b = new SqlBuilder(session.dialect)
    .append('SELECT * FROM ')
    .appendIdent(AUTH_POLICIES_TABLE)
    .append(' ORDER BY ')
    .appendIdent('id');
  const result = await session.query(renderSql(session.dialect, b.build()));
  return Object.freeze(result.rows.map(policyRowOf));
}

/**
 * An escalation (docs/policy-language.md) as the API and the CLI give it: non-admins can write
 * rows of `table` (`action`, allowed by policy `policy_id`) through which policy
 * `relation_policy_id` grants access.
 */
export interface PolicyEscalation {
  readonly table: string;
  readonly action: EscalationAction;
  readonly policy_id: number;
  readonly relation_policy_id: number;
  readonly relation_table: string;
  readonly message: string;
}

/** Every escalation among `rows` (broken rows allow nothing and grant nothing), against `schema`. */
export function escalationsAmong(
  rows: readonly PolicyRow[],
  schema: SchemaSnapshot,
  broken: ReadonlyMap<number, BrokenPolicy> = brokenPolicies(rows, schema),
): readonly PolicyEscalation[] {
  const warnings = findEscalations(rows, (row) =>
    broken.has(row.id) ? undefined : parsePolicy(row.expression),
  );
  return Object.freeze(
    warnings.map((w) =>
      Object.freeze({
        table: w.table,
        action: w.action,
        policy_id: w.policyId,
        relation_policy_id: w.relationPolicyId,
        relation_table: w.relationTable,
        message: w.message,
      }),
    ),
  );
}

/** Every escalation present among the stored rows, as `session` sees them. */
export async function storedEscalations(
  session: DbSession & Pick<DbAdapter, 'dialect'>,
  schema: SchemaSnapshot,
): Promise<readonly PolicyEscalation[]> {
  return escalationsAmong(await listPolicies(session), schema);
}

/** A stored row as `auth policy list` shows it: broken rows carry the reason they allow nothing. */
export interface ListedPolicy extends PolicyRow {
  readonly broken: boolean;
  readonly error: string | null;
  /** The escalations this row takes part in, as the relation policy or as the one that lets non-admins write. */
  readonly warnings: readonly string[];
}

/** Every policy row, by id, each marked when it is broken against `schema` (brokenPolicies). */
export async function listPoliciesChecked(
  adapter: DbSession & Pick<DbAdapter, 'dialect'>,
  schema: SchemaSnapshot,
): Promise<readonly ListedPolicy[]> {
  const rows = await listPolicies(adapter);
  const broken = brokenPolicies(rows, schema);
  const escalations = escalationsAmong(rows, schema, broken);
  return Object.freeze(
    rows.map((row) => {
      const problem = broken.get(row.id);
      const warnings = escalations
        .filter((w) => w.policy_id === row.id || w.relation_policy_id === row.id)
        .map((w) => w.message);
      return Object.freeze({
        ...row,
        broken: problem !== undefined,
        error: problem?.message ?? null,
        warnings: Object.freeze(warnings),
      });
    }),
  );
}
