// The text of `rest policy explain`: one section per step of the decision, the decision last.

import { postgresLiteral } from '../../compiler/sql/fragment.js';
import type { AuthUser } from '../../compiler/types.js';
import type {
  ExplainDecision,
  CandidateExplanation,
  PolicyExplanation,
} from '../../runtime/explain-policy.js';
import { formatAstTree } from '../output/ast-tree.js';
import { formatTable, type TableColumn } from '../output/table.js';
import { escapeCell } from '../output/text-cell.js';

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
  lines.push('', 'Resolution:', ...indent(e.steps.map(escapeCell)));
  lines.push('', 'Parsed expression:');
  for (const c of e.candidates.filter((x) => x.chosen)) {
    lines.push(
      `  #${c.id}: ${c.parsed === null ? `does not parse: ${escapeCell(c.error ?? '')}` : escapeCell(c.parsed) || '(empty: anyone)'}`,
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
  lines.push(
    '',
    `Decision: ${describeDecision(e.decision)}`,
    `  ${escapeCell(e.decision.reason)}`,
    ...decisionDetails(e.decision),
  );
  return `${lines.join('\n')}\n`;
}
