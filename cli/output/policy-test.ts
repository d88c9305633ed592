// The text of `rest policy test`: one line per failing case (where, what was expected, what
// happened), then the `policy explain` of that case — the chosen policy rows and the decision —
// and a summary `N passed, N failed`.

import type { CaseResult, FileResult } from '../../runtime/policy-test/run-file.js';
import type { PolicyExplanation } from '../../runtime/explain/explain-policy.js';

function explainLines(e: PolicyExplanation): string[] {
  const who = e.user.is_authenticated
    ? `${e.user.username ?? (e.user.is_admin ? 'an admin' : `user ${String(e.user.id)}`)}`
    : 'anonymous';
  const lines = [
    `    explain: ${e.table} ${e.action} as ${who} (${e.native_rls ? 'native RLS' : 'portable path'})`,
  ];
  const chosen = e.candidates.filter((c) => c.chosen);
  if (chosen.length === 0) lines.push('      no policy row is chosen');
  for (const c of chosen) {
    lines.push(
      `      policy ${c.id}: ${c.table_name} ${c.action} ${JSON.stringify(c.expression)}${c.broken ? ` (broken: ${c.error ?? ''})` : ''}`,
    );
  }
  const d = e.decision;
  const head = d.kind === 'deny' ? `deny ${d.status} ${d.error.code}` : d.kind;
  lines.push(`      decision: ${head} — ${d.reason}`);
  if (d.kind === 'filter') lines.push(`      predicate: ${d.sql}`);
  return lines;
}

function failureLines(file: FileResult, c: CaseResult): string[] {
  const lines = [`FAIL ${file.file}:${c.line}:${c.column} ${c.name}`];
  for (const p of c.problems) lines.push(`    ${p}`);
  if (c.explain !== undefined) lines.push(...explainLines(c.explain));
  return lines;
}

export function formatPolicyTests(files: readonly FileResult[]): string {
  const lines: string[] = [];
  for (const f of files) for (const c of f.cases) if (!c.passed) lines.push(...failureLines(f, c));
  const passed = files.reduce((n, f) => n + f.passed, 0);
  const failed = files.reduce((n, f) => n + f.failed, 0);
  const on = files[0] === undefined ? '' : ` (${files[0].database}: ${files[0].paths.join(' + ')})`;
  lines.push(`${passed} passed, ${failed} failed${on}`);
  return `${lines.join('\n')}\n`;
}
