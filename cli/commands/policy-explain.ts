// `rest policy explain <table> <action>`: how one request would be decided — every candidate
// row and why it was or was not chosen, the parsed expression, the compiled predicate with its
// bound values for the user, the RLS DDL on PostgreSQL, and the decision.

import type { CommandModule } from 'yargs';
import type { GlobalArgs } from '../config/global-options.js';
import {
  ACTIONS,
  compilePolicySet,
  nativePredicateSql,
  printPolicy,
  renderSql,
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
} from '../../compiler/index.js';
import { postgresLiteral } from '../../compiler/sql/fragment.js';
import { RestError } from '../../errors/rest-error.js';
import type { DbAdapter, TableInfo } from '../../runtime/db/adapter.js';
import type { Authorization } from '../../runtime/enforce/authorizer.js';
import { listPolicies } from '../../runtime/policies/policy-service.js';
import { policyColumnTypes } from '../../runtime/enforce/decide.js';
import { denialStatus } from '../../runtime/enforce/denials.js';
import { createPortableAuthorizer } from '../../runtime/enforce/portable-authorizer.js';
import { tableRls } from '../../runtime/rls/reconcile.js';
import { formatAstTree } from '../output/ast-tree.js';
import { formatJson } from '../output/json.js';
import { formatTable, type TableColumn } from '../output/table.js';
import { escapeCell } from '../output/text-cell.js';
import { requireAuthTables, withDatabase, type CommandContext } from './command-context.js';
import { explainUser, type ExplainUserFlags } from './explain-user.js';
import { rlsRoleFor } from './rls-role.js';

export interface CandidateExplanation extends PolicyRow {
  readonly chosen: boolean;
  readonly reason: string;
  /** The canonical text of the parsed expression (printPolicy), or null when it does not parse. */
  readonly parsed: string | null;
  readonly error: string | null;
}

export interface BoundSql {
  readonly sql: string;
  readonly values: readonly unknown[];
}

export interface SessionSettingValue {
  readonly name: string;
  readonly value: string;
}

export type ExplainDecision =
  | { readonly kind: 'allow'; readonly reason: string }
  | { readonly kind: 'deny'; readonly status: 401 | 403; readonly reason: string }
  /** Portable path: the predicate is AND-ed into the statement's WHERE with these bound values. */
  | ({ readonly kind: 'filter'; readonly enforced_by: 'where'; readonly reason: string } & BoundSql)
  /** Native path: the table's RLS policy filters, reading auth_user from these session settings. */
  | {
      readonly kind: 'filter';
      readonly enforced_by: 'rls';
      readonly reason: string;
      readonly sql: string;
      readonly settings: readonly SessionSettingValue[];
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
  /** The whole expression as this database's WHERE predicate, with auth_user bound for the user. */
  readonly predicate: BoundSql;
  /** PostgreSQL only: the row-level security DDL of this table, as the server applies it. */
  readonly rls_ddl: readonly string[] | null;
  readonly decision: ExplainDecision;
}

export interface ExplainInput {
  readonly rows: readonly PolicyRow[];
  readonly table: TableInfo;
  readonly action: Action;
  readonly user: AuthUser;
  readonly adapter: Pick<DbAdapter, 'kind' | 'dialect'>;
  readonly authEnabled: boolean;
  readonly nativeRls: boolean;
  /** The role the generated policies are for (PostgreSQL only). */
  readonly rlsRole: string | undefined;
}

const bound = (sql: { readonly text: string; readonly values: readonly unknown[] }): BoundSql => ({
  sql: sql.text,
  values: sql.values,
});

/** Why the decision is what it is, in one sentence. */
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

/** The decision of the server's own authorizer (runtime/policies), for this user. */
async function decide(
  set: PolicySet,
  rows: readonly PolicyRow[],
  input: ExplainInput,
  policy: CompiledPolicy,
): Promise<ExplainDecision> {
  const authorizer = createPortableAuthorizer({ policies: { get: async () => ({ rows, compiled: set }) } });
  const { user } = input;
  const authorization = await authorizer.authorize({ table: input.table, action: input.action, user });
  const reason = decisionReason(authorization.kind, policy, user);
  switch (authorization.kind) {
    case 'allow':
      return { kind: 'allow', reason };
    case 'deny':
      return { kind: 'deny', status: denialStatus(user), reason };
    case 'filter':
      // The native runner sends no WHERE of its own: the database's policy filters the rows.
      return input.nativeRls
        ? {
            kind: 'filter',
            enforced_by: 'rls',
            reason: "allowed on the rows the table's row-level security policy lets through",
            sql: nativePredicateSql(policy, policyColumnTypes(input.table)),
            settings: sessionSettingValues(user, input.action),
          }
        : {
            kind: 'filter',
            enforced_by: 'where',
            reason,
            ...bound(renderSql(input.adapter.dialect, authorization.predicate, user)),
          };
  }
}

export async function explainPolicy(input: ExplainInput): Promise<PolicyExplanation> {
  const set: PolicySet = compilePolicySet(input.rows, input.adapter.dialect);
  const columns = policyColumnTypes(input.table);
  const policy = set.policyFor(input.table.name, input.action, columns);
  const parsed = new Map(set.policies.map((p) => [p.row.id, p] as const));
  const candidates = policy.resolution.candidates.map((c): CandidateExplanation => {
    const p = parsed.get(c.row.id);
    return {
      ...c.row,
      chosen: c.chosen,
      reason: c.reason,
      parsed: p?.ok === true ? printPolicy(p.expr) : null,
      error: p?.ok === false ? p.error.message : null,
    };
  });
  return {
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
    predicate: bound(renderSql(input.adapter.dialect, policy.predicate, input.user)),
    rls_ddl: input.rlsRole === undefined ? null : tableRls(input.table, set, input.rlsRole).statements,
    decision: await decide(set, input.rows, input, policy),
  };
}

const CANDIDATE_COLUMNS: readonly TableColumn<CandidateExplanation>[] = [
  { header: 'id', value: (c) => c.id, align: 'right' },
  { header: 'table_name', value: (c) => c.table_name },
  { header: 'action', value: (c) => c.action },
  { header: 'chosen', value: (c) => (c.chosen ? 'yes' : 'no') },
  { header: 'expression', value: (c) => c.expression },
  { header: 'why', value: (c) => c.reason },
];

const values = (v: readonly unknown[]): string => escapeCell(JSON.stringify(v));
const indent = (lines: readonly string[]): string[] => lines.map((l) => (l === '' ? l : `  ${l}`));

function describeUser(user: AuthUser): string {
  if (!user.is_authenticated) return 'anonymous';
  const name = user.username === null ? '' : ` '${escapeCell(user.username)}'`;
  return `user ${String(user.id)}${name}${user.is_admin ? ' (admin)' : ' (not admin)'}`;
}

export function describeDecision(d: ExplainDecision): string {
  switch (d.kind) {
    case 'allow':
      return 'allow';
    case 'deny':
      return `deny ${d.status}`;
    case 'filter':
      return d.enforced_by === 'where'
        ? `filter ${escapeCell(d.sql)} ${values(d.values)}`
        : `filter by row-level security ${escapeCell(d.sql)}`;
  }
}

/** The human report: one section per step, the decision last. */
export function formatExplanation(e: PolicyExplanation): string {
  const lines: string[] = [
    `Request: ${e.action} on table '${escapeCell(e.table)}' by ${describeUser(e.user)}, ${e.database}` +
      (e.database === 'postgres' ? ` (row-level security ${e.native_rls ? 'on' : 'off'})` : ''),
  ];
  if (!e.auth_enabled) {
    lines.push(
      'Note: auth is off in this configuration (no -auth.secret): the server ignores policies and allows every request.',
    );
  }
  lines.push('', 'Candidate policies (table_name = the table or all):');
  lines.push(
    ...(e.candidates.length === 0
      ? ['  (none)']
      : indent(formatTable(CANDIDATE_COLUMNS, e.candidates).trimEnd().split('\n'))),
  );
  lines.push('', 'Resolution:', ...indent(e.steps.map(escapeCell)));
  lines.push('', 'Parsed expression:');
  for (const c of e.candidates.filter((x) => x.chosen)) {
    lines.push(
      `  #${c.id}: ${c.parsed === null ? `does not parse: ${escapeCell(c.error ?? '')}` : escapeCell(c.parsed) || '(empty: anyone)'}`,
    );
  }
  for (const issue of e.issues.filter((i) => i.kind === 'type'))
    lines.push(`  #${issue.policyId} is ignored: ${escapeCell(issue.message)}`);
  lines.push(
    `  combined: ${escapeCell(e.expression) || '(empty: anyone)'}`,
    ...indent(indent(formatAstTree(e.ast))),
  );
  if (e.missing_columns.length > 0) {
    lines.push(
      `  missing columns: ${e.missing_columns.map((c) => `'${escapeCell(c)}'`).join(', ')} (table '${escapeCell(e.table)}' lacks them)`,
    );
  }
  lines.push(
    '',
    `Compiled predicate (${e.database}, values bound for this user):`,
    `  ${escapeCell(e.predicate.sql)}`,
  );
  lines.push(`  values: ${values(e.predicate.values)}`);
  if (e.rls_ddl !== null) {
    lines.push(
      '',
      'Row-level security DDL (PostgreSQL):',
      ...indent(e.rls_ddl.map((s) => `${escapeCell(s)};`)),
    );
  }
  lines.push('', `Decision: ${describeDecision(e.decision)}`, `  ${escapeCell(e.decision.reason)}`);
  if (e.decision.kind === 'filter' && e.decision.enforced_by === 'rls') {
    lines.push(
      `  session settings: ${e.decision.settings.map((x) => `${x.name}=${escapeCell(postgresLiteral(x.value))}`).join(' ')}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

export function parseAction(text: string): Action {
  const action = ACTIONS.find((a) => a === text);
  if (action === undefined) {
    throw new RestError(
      'invalid_input',
      'invalid_action',
      `action must be one of ${ACTIONS.join(', ')} (got '${text}')`,
    );
  }
  return action;
}

export function findTable(tables: ReadonlyMap<string, TableInfo>, name: string): TableInfo {
  const table = tables.get(name);
  if (table === undefined)
    throw new RestError('not_found', 'unknown_table', `table '${name}' does not exist`);
  return table;
}

interface ExplainArgs extends GlobalArgs, ExplainUserFlags {
  readonly table: string;
  readonly action: string;
  readonly json: boolean;
}

export function policyExplainCommand(ctx: CommandContext): CommandModule<GlobalArgs, ExplainArgs> {
  return {
    command: 'explain <table> <action>',
    describe: 'Show how a request on <table> with <action> is decided for a user',
    builder: (y) =>
      y
        .positional('table', { type: 'string', demandOption: true, describe: 'A table of the database' })
        .positional('action', { type: 'string', demandOption: true, describe: ACTIONS.join(', ') })
        .option('user', {
          type: 'string',
          describe: 'Decide for the logged-in user with this id (auth_user.id)',
        })
        .option('admin', {
          type: 'boolean',
          default: false,
          describe: 'The user is an admin (auth_user.is_admin)',
        })
        .option('anonymous', {
          type: 'boolean',
          default: false,
          describe: 'Decide for an anonymous request (the default)',
        })
        .option('username', { type: 'string', describe: "The user's auth_user.username" })
        .option('claims', {
          type: 'string',
          describe: 'More token claims as a JSON object (auth_user.claims.<name>)',
        })
        .option('json', { type: 'boolean', default: false, describe: 'Print the explanation as JSON' })
        .example(
          '$0 -db.url sqlite://./rest.db policy explain todos read --user 2',
          'Why user 2 sees which todos',
        )
        .example('$0 policy explain todos delete --anonymous', 'What an anonymous DELETE gets')
        .example(
          '$0 policy explain docs read --user 5 --claims \'{"org_id": 7}\' --json',
          'A claim-based policy, as JSON',
        ),
    handler: async (argv) => {
      const action = parseAction(argv.action);
      const user = explainUser(argv);
      const config = ctx.config(argv);
      const explanation = await withDatabase(config, async (adapter) => {
        const schema = await adapter.introspect();
        requireAuthTables(schema);
        const table = findTable(schema.tables, argv.table);
        return await explainPolicy({
          rows: await listPolicies(adapter),
          table,
          action,
          user,
          adapter,
          authEnabled: config.auth.enabled,
          nativeRls: adapter.kind === 'postgres' && config.db.rls,
          rlsRole: adapter.kind === 'postgres' ? await rlsRoleFor(adapter, config.db.url) : undefined,
        });
      });
      ctx.io.stdout(argv.json ? formatJson(explanation) : formatExplanation(explanation));
    },
  };
}
