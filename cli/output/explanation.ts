// The text of `rest policy explain`: one section per step of the decision, the decision last.

import { postgresLiteral } from '../../compiler/sql/fragment.js';
import { quoteValue } from '../../errors/quote-value.js';
import type { AuthUser } from '../../compiler/types.js';
import type {
  ExplainDecision,
  CandidateExplanation,
  PolicyExplanation,
} from '../../runtime/explain/explain-policy.js';
import type { ColumnCondition, ColumnsExplanation } from '../../runtime/explain/explain-columns.js';
import type { RowCondition, RowExplanation } from '../../runtime/explain/explain-row.js';
import { formatAstTree } from './ast-tree.js';
import { formatTable, type TableColumn } from './table.js';
import { escapeCell } from './text-cell.js';

const CANDIDATE_COLUMNS: readonly TableColumn<CandidateExplanation>[] = [
  { header: 'id', value: (c) => c.id, align: 'right' },
  { header: 'table_name', value: (c) => c.table_name },
  { header: 'action', value: (c) => c.action },
  { header: 'chosen', value: (c) => (c.chosen ? 'yes' : 'no') },
  { header: 'status', value: (c) => (c.broken ? 'BROKEN' : 'ok') },
  { header: 'expression', value: (c) => c.expression },
  { header: 'why', value: (c) => c.reason },
];

const values = (v: readonly unknown[]): string => escapeCell(JSON.stringify(v));
const indent = (lines: readonly string[]): string[] => lines.map((l) => (l === '' ? l : `  ${l}`));

function describeUser(user: AuthUser): string {
  if (!user.is_authenticated) return 'anonymous';
  if (user.id === null) return 'some admin (no particular user id: auth_user.id is null)';
  const name = user.username === null ? '' : ` '${escapeCell(user.username)}'`;
  return `user ${String(user.id)}${name}${user.is_admin ? ' (admin)' : ' (not admin)'}`;
}

function describeDecision(d: ExplainDecision): string {
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

/** The decision's lines after its reason: the session settings (native) and the write's check. */
function decisionDetails(d: ExplainDecision): string[] {
  if (d.kind !== 'filter') return [];
  if (d.enforced_by === 'where') {
    return d.check === undefined
      ? []
      : [`  check: ${escapeCell(d.check.sql)} ${values(d.check.values)}`, `  ${escapeCell(d.check.reason)}`];
  }
  return [
    `  session settings: ${d.settings.map((x) => `${x.name}=${escapeCell(postgresLiteral(x.value))}`).join(' ')}`,
    ...(d.check === undefined
      ? []
      : [`  check: WITH CHECK ${escapeCell(d.check.sql)}`, `  ${escapeCell(d.check.reason)}`]),
  ];
}

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
  const broken = e.candidates.filter((c) => c.broken);
  if (broken.length > 0) {
    lines.push('', 'Broken policies (each allows nothing until it is fixed):');
    for (const c of broken) lines.push(`  #${c.id}: ${escapeCell(c.error ?? '')}`);
  }
  lines.push('', 'Resolution:', ...indent(e.steps.map(escapeCell)));
  lines.push('', 'Parsed expression:');
  for (const c of e.candidates.filter((x) => x.chosen)) {
    lines.push(
      `  #${c.id}: ${c.parsed === null ? `BROKEN, does not parse: ${escapeCell(c.error ?? '')}` : escapeCell(c.parsed) || '(empty: anyone)'}`,
    );
  }
  for (const issue of e.issues.filter((i) => i.kind !== 'syntax'))
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
  if (e.relations.length > 0) {
    lines.push('', "Subqueries (each sees its table through that table's own read policy):");
    for (const r of e.relations) {
      const columns =
        r.columns.length === 0 ? '' : ` (${r.columns.map((c) => `'${escapeCell(c)}'`).join(', ')})`;
      const seen =
        r.read_policy === null
          ? 'no read policy applies: it sees no row'
          : `read policy: ${escapeCell(r.read_policy) || '(empty: anyone)'}`;
      lines.push(`  ${escapeCell(r.table)}${columns}: ${seen}`);
      if (r.index_warning !== null) lines.push(`    warning: ${escapeCell(r.index_warning)}`);
    }
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
  lines.push('', ...columnLines(e.columns));
  lines.push(
    '',
    `Decision: ${describeDecision(e.decision)}`,
    `  ${escapeCell(e.decision.reason)}`,
    ...decisionDetails(e.decision),
  );
  for (const warning of e.warnings) lines.push(`  warning: ${escapeCell(warning)}`);
  if (e.escalations.length > 0) {
    lines.push(
      '',
      'Escalation warnings (non-admins can write rows a relation policy grants access through):',
    );
    for (const w of e.escalations) lines.push(`  warning: ${escapeCell(w.message)}`);
  }
  if (e.row !== null) lines.push('', ...rowLines(e.row, e.native_rls));
  return `${lines.join('\n')}\n`;
}

const names = (columns: readonly string[]): string =>
  columns.length === 0 ? '(none)' : escapeCell(columns.join(', '));

const conditional = (c: ColumnCondition): string =>
  `${escapeCell(c.column)} when ${escapeCell(c.when)} (${c.policy_ids.map((id) => `#${id}`).join(', ')})`;

/** Per action, one line per kind of column; a denied action says so instead. */
function columnLines(c: ColumnsExplanation): string[] {
  const lines = ['Columns for this user (docs/policy-language.md "Columns"):'];
  const section = (
    action: string,
    denied: boolean,
    granted: readonly string[],
    conditions: readonly ColumnCondition[],
    refused: readonly string[],
    words: { readonly conditional: string; readonly refused: string },
  ): void => {
    if (denied) {
      lines.push(`  ${action}: none (the ${action} itself is denied)`);
      return;
    }
    lines.push(`  ${action}: ${names(granted)}`);
    for (const m of conditions) lines.push(`  ${action} ${words.conditional}: ${conditional(m)}`);
    if (refused.length > 0) lines.push(`  ${action} ${words.refused}: ${names(refused)}`);
  };
  section('read', c.read.denied, c.read.readable, c.read.masked, c.read.hidden, {
    conditional: 'masked (NULL in the other rows)',
    refused: 'hidden',
  });
  for (const action of ['create', 'update'] as const) {
    const w = c[action];
    section(action, w.denied, w.writable, w.conditional, w.protected, {
      conditional: 'only',
      refused: 'protected',
    });
  }
  return lines;
}

const TRUTH = (v: boolean | null): string => (v === null ? 'NULL' : v ? 'TRUE' : 'FALSE');

/** A condition and its parts, one per line: its value in a column of its own, the text indented by depth. */
function conditionLines(c: RowCondition, depth: number): string[] {
  const id = c.policy_id === undefined ? '' : `#${c.policy_id} `;
  const text =
    c.error === undefined
      ? escapeCell(c.expression) || '(empty: anyone)'
      : `BROKEN, counts as FALSE: ${escapeCell(c.error)}`;
  const value = c.error === undefined ? TRUTH(c.value) : 'FALSE';
  const line = `  ${value.padEnd(6)} ${'  '.repeat(depth)}${id}${text}${c.decides ? '   ← decides' : ''}`;
  return [line, ...c.parts.flatMap((p) => conditionLines(p, depth + 1))];
}

/** A stored value as SQL would write it: 'text' (quoted like error messages quote), NULL, 7, true. */
function sqlValue(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'string') return quoteValue(v);
  return typeof v === 'object' ? quoteValue(JSON.stringify(v)) : String(v as number | boolean | bigint);
}

/** `--row`: the verdict, the stored values the policy reads, and every condition's value. */
function rowLines(r: RowExplanation, nativeRls: boolean): string[] {
  const values = Object.entries(r.values).map(([k, v]) => `${k} = ${sqlValue(v)}`);
  const lines = [
    `Row ${escapeCell(r.key.column)} = ${escapeCell(quoteValue(r.key.value))} of table '${escapeCell(r.table)}':`,
    `  ${escapeCell(r.verdict)}`,
  ];
  if (values.length > 0) lines.push(`  stored values the policy reads: ${escapeCell(values.join(', '))}`);
  if (!r.evaluated) return lines;
  lines.push(
    `  evaluated on the row by the database${nativeRls ? ' (as the compiled WHERE predicate, which means what the RLS policy means)' : ''}:`,
    `  ${TRUTH(r.value).padEnd(6)} (the chosen policies, OR-ed)`,
    ...r.conditions.flatMap((c) => conditionLines(c, 1)),
    "  (NULL is SQL's unknown: it allows nothing, like FALSE)",
  );
  return lines;
}
