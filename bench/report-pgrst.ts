// The PostgREST dialect's section of BENCHMARKS.md: each `/rest/v1` request beside the same request
// through the seed dialect, round by round, with the round trips and statements of each.

import type { DialectRow, Measured, PgrstReport, RoundTrips, ScenarioRow } from './report-model.js';
import { timesText } from './report-model.js';
import { COUNT_EXTRA_STATEMENTS, PGRST_MIN_RATIO } from './targets.js';

const num = (v: number): string =>
  Number.isFinite(v) ? v.toLocaleString('en-US', { maximumFractionDigits: 0 }) : '–';
const ms = (v: number): string => (Number.isFinite(v) ? v.toFixed(2) : '–');
const orDash = (v: number | null): string => (v === null ? '–' : num(v));
const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function tripsCells(t: Measured<RoundTrips> | null): string {
  if (t === null) return 'n/a (in-process) | –';
  if (!t.ok) return `${cell(`not measured: ${t.reason}`)} | –`;
  const statements = t.value.statementsPerRequest;
  return `${t.value.flightsPerRequest.toFixed(2)} | ${statements === undefined ? '–' : statements.toFixed(2)}`;
}

function line(
  request: string,
  row: ScenarioRow | undefined,
  vsSeed: DialectRow['vsSeed'] | undefined,
): string {
  if (row === undefined) return `| – | ${request} | not run |  |  |  |  |  |  |  |  |`;
  if (!row.outcome.ok)
    return `| ${row.label} | ${request} | **failed**: ${cell(row.outcome.reason)} |  |  |  |  |  |  | ${tripsCells(row.roundTrips)} |`;
  const s = row.outcome.value;
  const ratio = vsSeed === undefined ? 'seed' : vsSeed === null ? '–' : timesText(vsSeed.rps);
  const p99 = vsSeed === undefined ? '' : vsSeed === null ? '–' : timesText(vsSeed.p99);
  return `| ${row.label} | ${request} | ${num(s.rps.median)} (${num(s.rps.min)}–${num(s.rps.max)}) | ${ratio} | ${ms(s.p50Ms)} | ${ms(s.p99Ms)} | ${p99} | ${orDash(s.cpuUsPerRequest)} | ${orDash(s.dbCpuUsPerRequest)} | ${tripsCells(row.roundTrips)} |`;
}

/** Per round: the seed request's req/s, then each `/rest/v1` request's and its ratio to it. */
function roundsTable(
  head: readonly string[],
  rounds: number,
  seed: readonly ScenarioRow[],
  dialect: readonly (readonly DialectRow[])[],
): string {
  const lines = [
    `| round | contender | ${head.join(' | ')} |`,
    `|---:|---|${head.map(() => '---:').join('|')}|`,
  ];
  for (let round = 1; round <= rounds; round++) {
    for (const s of seed) {
      const o = s.rounds.find((x) => x.round === round);
      if (o === undefined) continue;
      const cells = dialect.map((rows) => {
        const t = rows.find((r) => r.contender === s.contender)?.rounds.find((x) => x.round === round);
        if (t === undefined) return '– | –';
        return `${num(t.rps)} | ${o.rps > 0 ? `${(t.rps / o.rps).toFixed(2)}×` : '–'}`;
      });
      lines.push(`| ${round} | ${s.label} | ${num(o.rps)} | ${cells.join(' | ')} |`);
    }
  }
  return lines.join('\n');
}

export function pgrstSection(
  pgrst: PgrstReport | null | undefined,
  rounds: { readonly read: number; readonly write: number },
  read: readonly ScenarioRow[],
): string {
  const title = '## The PostgREST dialect (`/rest/v1`) beside the seed dialect';
  if (pgrst === undefined)
    return `${title}\n\nNot in this report: the run that wrote it predates these lanes (\`npm run bench\` measures them).`;
  if (pgrst === null) return `${title}\n\nNot run (\`--pgrst off\`).`;
  const q = pgrst.requests;
  const seedReads = pgrst.read.flatMap((r) => read.find((x) => x.contender === r.contender) ?? []);
  const rows = pgrst.read.flatMap((r) => {
    const id = r.contender;
    const of = <T extends ScenarioRow>(list: readonly T[]): T | undefined =>
      list.find((x) => x.contender === id);
    const counted = of(pgrst.countedRead);
    const create = of(pgrst.create);
    return [
      line('seed read', of(seedReads), undefined),
      line('`/rest/v1` read', r, r.vsSeed),
      line('`/rest/v1` read, `count=exact`', counted, counted?.vsSeed ?? null),
      line('seed POST', of(pgrst.seedCreate), undefined),
      line('`/rest/v1` POST', create, create?.vsSeed ?? null),
    ];
  });
  return `${title}

The same requests in both dialects, on every rest contender, with the same tokens in the same order:

- seed read \`${q.seedRead}\` and \`/rest/v1\` read \`${q.read}\` (the owner read, paged by \`offset\`/\`limit\`);
- counted read \`${q.countedRead}\` (the total as a window \`COUNT(*) OVER ()\` in the same SELECT: \`Content-Range: 0-19/<total>\`, 206);
- seed POST \`${q.seedCreate}\` and \`/rest/v1\` POST \`${q.create}\` of one row (both answer the created row).

Each round times a contender's seed read, \`/rest/v1\` read, session read and counted read one after the other (in
reverse every other round), and in the write rounds its write mix, seed POST and \`/rest/v1\` POST (the two POSTs
swapped every other round); × seed is the \`/rest/v1\` request ÷ the seed request of the same contender in the same
round. Probes first: the \`/rest/v1\` read answers each probed user exactly the seed read's rows with
\`Content-Range: 0-19/*\`, the counted read the user's row count as the total, the POST the row it created with the
owner filled in. Targets: ≥ ${PGRST_MIN_RATIO}× the seed request's req/s (read and POST, every rest contender); on both PostgreSQL
paths one round trip per request, and \`count=exact\` at most ${COUNT_EXTRA_STATEMENTS} more statement (Execute or Query message) than the read without it.

| contender | request | median req/s (min–max) | × seed req/s (same round) | p50 ms | p99 ms | × seed p99 | server CPU µs/req | PostgreSQL CPU µs/req | round trips/req | statements/req |
|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|
${rows.join('\n')}

Reads, per round:

${roundsTable(['seed read req/s', '`/rest/v1` read req/s', '÷ seed', 'counted read req/s', '÷ seed'], rounds.read, seedReads, [pgrst.read, pgrst.countedRead])}

Single-row POSTs, per round:

${roundsTable(['seed POST req/s', '`/rest/v1` POST req/s', '÷ seed'], rounds.write, pgrst.seedCreate, [pgrst.create])}`;
}
