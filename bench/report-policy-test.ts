// The policy-test lane in BENCHMARKS.md and among the targets: `rest policy test` on a file of 200
// cases, the process's wall time against the limits, the in-library time beside it.

import type { Measured, TargetCheck } from './report-model.js';
import {
  POLICY_TEST_LIMITS_S,
  type PolicyTestDatabase,
  type PolicyTestReport,
  type PolicyTestTiming,
} from './policy-test-lane.js';

const LABELS: Readonly<Record<PolicyTestDatabase, string>> = {
  sqlite: 'SQLite',
  postgres: 'PostgreSQL',
};
const DATABASES = ['sqlite', 'postgres'] as const;
const seconds = (ms: number): string => (ms / 1000).toFixed(2);
const secondsSpread = (s: PolicyTestTiming['processMs']): string =>
  `${seconds(s.median)} s (${seconds(s.min)}–${seconds(s.max)})`;

/** SQLite < 2 s and PostgreSQL (both paths) < 5 s, wall time of the process, start included. */
export function policyTestTargets(
  lane: Measured<PolicyTestReport> | null | undefined,
): readonly TargetCheck[] {
  return DATABASES.map((db): TargetCheck => {
    const paths = db === 'postgres' ? ', both paths' : '';
    const target = `\`rest policy test\` on a file of 200 cases, ${LABELS[db]}${paths}: under ${POLICY_TEST_LIMITS_S[db]} s (process wall time, start included)`;
    if (lane === undefined) return { target, measured: 'not measured', met: false };
    if (lane === null)
      return { target, measured: 'not run: the policy-test lane is off (--policy-test off)', met: false };
    if (!lane.ok) return { target, measured: `not run: ${lane.reason}`, met: false };
    const timing = lane.value[db];
    if (!timing.ok) return { target, measured: `not measured: ${timing.reason}`, met: false };
    const t = timing.value;
    return {
      target,
      measured: `${secondsSpread(t.processMs)} over ${lane.value.runs} runs; in-library ${seconds(t.inLibraryMs.median)} s`,
      met: t.processMs.median < POLICY_TEST_LIMITS_S[db] * 1000,
    };
  });
}

/** The lane's table: per database, the paths run, process and in-library times, the command's summary. */
export function policyTestTable(r: PolicyTestReport): string {
  const row = (db: PolicyTestDatabase): string => {
    const m = r[db];
    if (!m.ok) return `| ${LABELS[db]} | – | not measured: ${m.reason.replace(/\|/g, '\\|')} | – | – |`;
    const t = m.value;
    return `| ${LABELS[db]} | ${t.paths} | ${secondsSpread(t.processMs)} | ${secondsSpread(t.inLibraryMs)} | < ${POLICY_TEST_LIMITS_S[db]} s |`;
  };
  return [
    `| database | paths | \`rest policy test\` process, s (median, min–max) | in-library, s | target |`,
    '|---|---|---:|---:|---|',
    ...DATABASES.map(row),
  ].join('\n');
}

export function policyTestSection(lane: Measured<PolicyTestReport> | null | undefined): string {
  const title = '## Policy tests (`rest policy test`, a file of 200 cases)';
  if (lane === undefined) return `${title}\n\nNot measured in this run.`;
  if (lane === null) return `${title}\n\nNot run in this run (\`--policy-test off\`).`;
  if (!lane.ok) return `${title}\n\n**Not run**: ${lane.reason}`;
  const r = lane.value;
  return `${title}

A generated file of ${r.cases} cases (reads in both dialects, a refusal, POSTs and PATCHes over two users' notes, every case
passing) run with \`rest -db.url <url> policy test cases.yml\` as a user runs it: the process's wall time from spawn to
exit, Node.js start and the file's transaction included, ${r.runs} runs each (median, min–max), on a fresh SQLite file and a fresh
PostgreSQL database (there, both paths: the default). In-library: the same file through \`runPolicyTestFile\` in the
bench's own process on an open database, after one untimed run — the command's cost without starting. Measured after
every contender has stopped (\`npm run bench:policy-test\` runs this lane alone).

${policyTestTable(r)}`;
}
