// The column-rule read lane (bench/column-rules.ts) in BENCHMARKS.md and among the targets: the
// masked + hidden read against the same contender's plain owner read, round by round, and its
// round trips on the PostgreSQL paths.

import type { ContenderId, Measured, RoundTrips, ScenarioRow, TargetCheck, TeamRow } from './report-model.js';
import { timesText } from './report-model.js';
import { ONE_ROUND_TRIP } from './targets.js';

/** The masked + hidden read keeps this share of the plain owner read's req/s. */
export const COLUMN_RULE_MIN_RATIO = 0.9;
/** Every rest contender: both PostgreSQL paths and SQLite. */
export const COLUMN_RULE_CONTENDERS: readonly ContenderId[] = [
  'rest-pg-portable',
  'rest-pg-rls',
  'rest-sqlite',
];

export interface ColumnRuleReport {
  readonly path: string;
  readonly policies: readonly {
    readonly expression: string;
    readonly columns: string;
  }[];
  /** Each contender's masked + hidden read, with its per-round ratios to its owner read. */
  readonly read: readonly TeamRow[];
}

const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const num = (v: number): string => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : '–');
const trips = (t: Measured<RoundTrips> | null): string =>
  t === null ? '–' : t.ok ? t.value.flightsPerRequest.toFixed(2) : `not measured: ${cell(t.reason)}`;

/** Per contender: ≥ 0.9× its plain read's req/s; on PostgreSQL also one round trip per request. */
export function columnRuleTargets(
  read: readonly ScenarioRow[],
  lane: ColumnRuleReport | null | undefined,
  notRun = 'the column-rule lane is off (--columns off)',
): readonly TargetCheck[] {
  return COLUMN_RULE_CONTENDERS.flatMap((id): TargetCheck[] => {
    const label = read.find((r) => r.contender === id)?.label ?? id;
    const rpsTarget = `${label}: column rules: masked + hidden read ≥ ${COLUMN_RULE_MIN_RATIO}× the plain read's req/s`;
    const tripsTarget = `${label}: column rules: masked + hidden read in one round trip per request`;
    const targets = id === 'rest-sqlite' ? [rpsTarget] : [rpsTarget, tripsTarget];
    const row = lane?.read.find((r) => r.contender === id);
    const why =
      (lane === undefined ? 'not measured' : undefined) ??
      (lane === null ? `not run: ${notRun}` : undefined) ??
      (row === undefined ? 'not run' : undefined) ??
      (row?.outcome.ok === false ? `failed: ${row.outcome.reason}` : undefined);
    if (why !== undefined || row === undefined)
      return targets.map((target) => ({ target, measured: why ?? 'not run', met: false }));
    const ratio = row.vsOwnerRead?.rps ?? null;
    const checks: TargetCheck[] = [
      ratio === null
        ? { target: rpsTarget, measured: 'no common rounds with the plain read', met: false }
        : { target: rpsTarget, measured: timesText(ratio), met: ratio.median >= COLUMN_RULE_MIN_RATIO },
    ];
    if (id !== 'rest-sqlite') {
      const t = row.roundTrips;
      checks.push({
        target: tripsTarget,
        measured: t === null ? 'not measured' : trips(t),
        met: t !== null && t.ok && t.value.flightsPerRequest <= ONE_ROUND_TRIP,
      });
    }
    return checks;
  });
}

export function columnRuleSection(
  lane: ColumnRuleReport | null | undefined,
  read: readonly ScenarioRow[],
): string {
  const title = '## Reads with column rules: a masked and a hidden column';
  if (lane === undefined) return `${title}\n\nNot measured in this run.`;
  if (lane === null) return `${title}\n\nNot run in this run (\`--columns off\`).`;
  const rows = lane.read.map((row) => {
    if (!row.outcome.ok) return `| ${row.label} | **failed**: ${cell(row.outcome.reason)} |  |  |  |  |`;
    const s = row.outcome.value;
    const plain = read.find((r) => r.contender === row.contender)?.roundTrips ?? null;
    const pg = row.contender !== 'rest-sqlite';
    return `| ${row.label} | ${num(s.rps.median)} (${num(s.rps.min)}–${num(s.rps.max)}) | ${row.vsOwnerRead === null ? '–' : timesText(row.vsOwnerRead.rps)} | ${s.p99Ms.toFixed(2)} | ${pg ? trips(row.roundTrips) : '–'} | ${pg ? trips(plain) : '–'} |`;
  });
  return `${title}

\`GET ${lane.path}\`: the owner read's shape (same users, tokens and order) on \`col_items\`, a copy of \`items\`
(same rows and index) whose read policies grant columns per row (docs/policy-language.md, "Columns"):

${lane.policies.map((p) => `- \`${p.expression}\` grants \`${p.columns}\``).join('\n')}

So \`done\` is hidden (no row grants it) and \`amount\` masked: shown in the caller's rows that are done (about 30%),
\`null\` in the others — decided row by row, in the statement on PostgreSQL and SQLite alike. Each round times a
contender's plain owner read and this read back to back (swapping which goes first every other round); the ratio is
this ÷ plain of the same contender in the same round. Target: ≥ ${COLUMN_RULE_MIN_RATIO}×, and one round trip per request on PostgreSQL.

| contender | median req/s (min–max) | × plain read req/s (same round) | p99 ms | round trips/req | plain read round trips/req |
|---|---:|---:|---:|---:|---:|
${rows.join('\n')}`;
}
