// Two sections of BENCHMARKS.md about production conditions: both PostgreSQL paths behind a
// transaction-mode pooler (bench/pooler.ts) and under hostile load (bench/hostile.ts). A report
// from before these lanes existed has neither: it says so instead of a table.

import { hostileTable, type HostileReport } from './hostile.js';
import type { PoolerReport } from './pooler.js';
import { spread, timesText, type Measured } from './report-model.js';
import { POOLER_MIN_RATIO } from './targets.js';

const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const num = (v: number): string =>
  Number.isFinite(v) ? v.toLocaleString('en-US', { maximumFractionDigits: 0 }) : '–';

/** Why a lane has no table: not in this report, off, or not run with its reason. */
function notMeasured<T>(
  lane: Measured<T> | null | undefined,
  flag: string,
): { readonly text: string } | { readonly value: T } {
  if (lane === undefined) return { text: 'Not measured in this run (the report predates this lane).' };
  if (lane === null)
    return {
      text: `Not run (\`${flag} off\`; the smoke profile leaves it out unless \`${flag} on\` is given).`,
    };
  if (!lane.ok) return { text: `**Not run**: ${cell(lane.reason)}` };
  return { value: lane.value };
}

export function poolerSection(pooler: Measured<PoolerReport> | null | undefined): string {
  const title = '## Behind a pooler: PgBouncer in transaction mode';
  const r = notMeasured(pooler, '--pooler');
  if ('text' in r) return `${title}\n\n${r.text}`;
  const p = r.value;
  return `${title}

Each PostgreSQL path served twice on one database of ${num(p.rows)} rows over ${num(p.users)} users: connected directly, and through
PgBouncer at ${p.pgbouncer} with \`-db.pooler transaction\` (LISTEN on \`-db.listen_url\`); the owner read and the single-row
POST above, ${p.connections} connections, ${p.rounds} interleaved round${p.rounds === 1 ? '' : 's'} of ${p.seconds} s (the side going first alternating by round).
The ratio is pooled ÷ direct in the same round, median (min–max); target ≥ ${POOLER_MIN_RATIO}×. PgBouncer runs on the same cores.
\`npm run bench:pooler\` runs this lane alone.

| path | workload | direct req/s (median) | PgBouncer req/s (median) | pooled ÷ direct | each round |
|---|---|---:|---:|---:|---|
${p.lanes
  .map((l) => {
    const rounds = l.pooled.map((v, i) => (v / (l.direct[i] ?? Number.NaN)).toFixed(2)).join(', ');
    return `| ${l.path} | ${l.workload === 'read' ? 'owner read' : 'single-row POST'} | ${num(spread(l.direct).median)} | ${num(spread(l.pooled).median)} | ${timesText(l.ratio)} | ${rounds} |`;
  })
  .join('\n')}`;
}

export function hostileSection(hostile: Measured<HostileReport> | null | undefined): string {
  const title = '## Under hostile load';
  const r = notMeasured(hostile, '--hostile');
  if ('text' in r) return `${title}\n\n${r.text}`;
  const h = r.value;
  return `${title}

One server per path on a fresh database (\`-db.max_waiting ${h.maxWaiting}\`, a 120 s statement timeout): ${num(h.failing)} failing requests over
${h.connections} connections (a bad value, a unique violation, a policy check refused inside the statement) counted against the
database's new sessions (PostgreSQL: \`pg_stat_database.sessions\` and backend pids; MariaDB: connection ids looked at every
10 ms); ${h.abandoned} slow writes (a trigger sleeping 60 s) whose clients close 5 ms after sending, timed until none runs, while
other users read (${h.readSeconds} s windows, with the burst ÷ quiet); then ${h.crowd} slow writes at once, counting the refusals past
\`-db.max_waiting\`. Figures, not targets: single runs on a shared machine swing widely. \`npm run bench:hostile\` runs this lane alone.

${hostileTable(h).join('\n')}`;
}
