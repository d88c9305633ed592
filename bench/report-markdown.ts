// BENCHMARKS.md, rendered from a run's results: targets, tables, rounds, method, machine, command.

import { FULL_DATA } from './generate-data.js';
import { FULL_PROFILE, isFullProtocol, READ_ALONE_REQUESTS, SMOKE_REQUESTS, windowText } from './options.js';
import type {
  BenchReport,
  Measured,
  RoundTrips,
  ActionTrips,
  ScenarioRow,
  SessionReport,
  Spread,
  TeamReport,
} from './report-model.js';
import { timesText } from './report-model.js';
import { columnRuleSection } from './report-column-rules.js';
import { pgrstSection } from './report-pgrst.js';
import { policyTestSection } from './report-policy-test.js';
import { hostileSection, poolerSection } from './report-production.js';
import { STARTUP_COMMANDS, STARTUP_LIMITS, type StartupCommand, type StartupReport } from './startup.js';
import { LOGIN_READ_P99_LIMIT_MS, SESSION_READ_MIN_RATIO, TEAM_READ_MIN_RATIO } from './targets.js';

const num = (v: number, digits = 0): string =>
  Number.isFinite(v)
    ? v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : '–';
const ms = (v: number): string => (Number.isFinite(v) ? v.toFixed(2) : '–');
const orDash = (v: number | null, digits = 0): string => (v === null ? '–' : num(v, digits));
const times = (s: Spread | null): string => (s === null ? '–' : timesText(s));
const pct = (share: number): string => `${(share * 100).toFixed(0)}%`;
/** More than this share of the CPU used by other work marks the run as done on a busy machine. */
const BUSY_SHARE = 0.1;
const cell = (s: string): string => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const plural = (n: number, word: string): string => `${num(n)} ${word}${n === 1 ? '' : 's'}`;

/** One window of the run's protocol as options.ts names it; `–` for a report that has neither. */
function windowPhrase(seconds: number | null, requests: number | null | undefined): string {
  if (requests !== null && requests !== undefined) return windowText({ kind: 'requests', requests });
  return seconds === null ? '–' : windowText({ kind: 'seconds', seconds });
}

function trips(t: Measured<RoundTrips> | null): string {
  if (t === null) return 'n/a (in-process)';
  if (!t.ok) return cell(`not measured: ${t.reason}`);
  return `${t.value.flightsPerRequest.toFixed(2)} (${t.value.messagesPerRequest.toFixed(1)} msgs)`;
}

function scenarioTable(
  rows: readonly ScenarioRow[],
  withBaseline: boolean,
  rss: (row: ScenarioRow) => string,
): string {
  const head = withBaseline
    ? '| contender | median req/s (min–max) | × baseline req/s | p50 ms | p99 ms | × baseline p99 | server CPU µs/req | PostgreSQL CPU µs/req | round trips/req | peak RSS MB |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|'
    : '| contender | median req/s (min–max) | p50 ms | p99 ms | server CPU µs/req | PostgreSQL CPU µs/req | round trips/req |\n|---|---:|---:|---:|---:|---:|---:|';
  const lines = rows.map((row) => {
    if (!row.outcome.ok) {
      const cells = [
        row.label,
        `**failed**: ${cell(row.outcome.reason)}`,
        ...Array<string>(withBaseline ? 7 : 5).fill(''),
      ];
      if (withBaseline) cells.push(rss(row));
      return `| ${cells.join(' | ')} |`;
    }
    const s = row.outcome.value;
    const rps = `${num(s.rps.median)} (${num(s.rps.min)}–${num(s.rps.max)})`;
    const cpu = orDash(s.cpuUsPerRequest);
    const db = orDash(s.dbCpuUsPerRequest);
    return withBaseline
      ? `| ${row.label} | ${rps} | ${times(row.vsBaseline?.rps ?? null)} | ${ms(s.p50Ms)} | ${ms(s.p99Ms)} | ${times(row.vsBaseline?.p99 ?? null)} | ${cpu} | ${db} | ${trips(row.roundTrips)} | ${rss(row)} |`
      : `| ${row.label} | ${rps} | ${ms(s.p50Ms)} | ${ms(s.p99Ms)} | ${cpu} | ${db} | ${trips(row.roundTrips)} |`;
  });
  return [head, ...lines].join('\n');
}

function roundsTable(rows: readonly ScenarioRow[]): string {
  const maxRound = Math.max(0, ...rows.flatMap((r) => r.rounds.map((x) => x.round)));
  const lines: string[] = [
    '| round | contender | req/s | p50 ms | p99 ms | server CPU µs/req | non-2xx |',
    '|---:|---|---:|---:|---:|---:|---:|',
  ];
  for (let round = 1; round <= maxRound; round++) {
    for (const row of rows) {
      const r = row.rounds.find((x) => x.round === round);
      if (r === undefined) continue;
      lines.push(
        `| ${round} | ${row.label} | ${num(r.rps)} | ${ms(r.p50Ms)} | ${ms(r.p99Ms)} | ${orDash(r.cpuUsPerRequest)} | ${r.non2xx + r.errors} |`,
      );
    }
  }
  return lines.join('\n');
}

/** The team membership workload: the owner-filter read's request shape on a table filtered through `members`. */
function teamSection(team: TeamReport | null, rounds: number, read: readonly ScenarioRow[]): string {
  if (team === null) {
    return `## Reads through a relation: team membership

Not run (\`--team off\`; the smoke profile leaves it out unless \`--team on\` is given).`;
  }
  const head = [
    '| contender | median req/s (min–max) | × owner-filter read req/s (same round) | p50 ms | p99 ms | × owner-filter read p99 | server CPU µs/req | PostgreSQL CPU µs/req | round trips/req |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  const lines = team.read.map((row) => {
    if (!row.outcome.ok)
      return `| ${row.label} | **failed**: ${cell(row.outcome.reason)} |  |  |  |  |  |  |  |`;
    const s = row.outcome.value;
    return `| ${row.label} | ${num(s.rps.median)} (${num(s.rps.min)}–${num(s.rps.max)}) | ${times(row.vsOwnerRead?.rps ?? null)} | ${ms(s.p50Ms)} | ${ms(s.p99Ms)} | ${times(row.vsOwnerRead?.p99 ?? null)} | ${orDash(s.cpuUsPerRequest)} | ${orDash(s.dbCpuUsPerRequest)} | ${trips(row.roundTrips)} |`;
  });
  const roundLines = [
    '| round | contender | owner-filter read req/s | team read req/s | team ÷ owner |',
    '|---:|---|---:|---:|---:|',
  ];
  for (let round = 1; round <= rounds; round++) {
    for (const row of team.read) {
      const t = row.rounds.find((x) => x.round === round);
      const o = read.find((r) => r.contender === row.contender)?.rounds.find((x) => x.round === round);
      if (t === undefined || o === undefined) continue;
      roundLines.push(
        `| ${round} | ${row.label} | ${num(o.rps)} | ${num(t.rps)} | ${o.rps > 0 ? `${(t.rps / o.rps).toFixed(2)}×` : '–'} |`,
      );
    }
  }
  return `## Reads through a relation: team membership

\`GET /team_items?order=id.asc&page_size=20\` — the owner-filter read's request shape — with a bearer token of one of
${num(team.users)} users; \`team_items\` holds ${num(team.rows)} rows spread evenly over ${num(team.teams)} teams, and each user is in one or
two teams (${num(team.memberships)} rows of \`members\`), so a caller sees ${num(team.rows / team.teams)}–${num((2 * team.rows) / team.teams)} rows of which the first 20 come back.
The policies, written through \`POST /auth_policies\` as an admin (the README's team pattern):

${team.policies.map((p) => `- \`${p.table_name} / ${p.action} / ${p.expression}\``).join('\n')}

Indexes: \`team_items (team_id)\`, \`members\` primary key \`(user_id, team_id)\` and \`members (team_id)\`. Timed in the
same rounds as the owner-filter read (after it, each round); target: ≥ ${TEAM_READ_MIN_RATIO}× the same path's owner-filter read req/s,
round by round.

${[...head, ...lines].join('\n')}

${roundLines.join('\n')}`;
}

/** The session read: the owner read with built-in users' session tokens beside the same read with external tokens. */
export function sessionSection(
  sessions: SessionReport | null,
  rounds: number,
  read: readonly ScenarioRow[],
): string {
  const title = '## Reads with session checks';
  if (sessions === null)
    return `${title}\n\nNot run (\`--sessions off\`; the smoke profile leaves it out unless \`--sessions on\` is given).`;
  const head = [
    "| contender | median req/s (min–max) | × external-token read req/s (same round) | p50 ms | p99 ms | × external-token read p99 | server CPU µs/req | PostgreSQL CPU µs/req | round trips/req | external-token read round trips/req | round trips on a user's first request |",
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  const lines = sessions.read.map((row) => {
    if (!row.outcome.ok)
      return `| ${row.label} | **failed**: ${cell(row.outcome.reason)} |  |  |  |  |  |  |  |`;
    const s = row.outcome.value;
    const external = read.find((r) => r.contender === row.contender)?.roundTrips ?? null;
    const first = row.roundTrips?.ok === true ? row.roundTrips.value.firstPass : undefined;
    return `| ${row.label} | ${num(s.rps.median)} (${num(s.rps.min)}–${num(s.rps.max)}) | ${times(row.vsOwnerRead?.rps ?? null)} | ${ms(s.p50Ms)} | ${ms(s.p99Ms)} | ${times(row.vsOwnerRead?.p99 ?? null)} | ${orDash(s.cpuUsPerRequest)} | ${orDash(s.dbCpuUsPerRequest)} | ${trips(row.roundTrips)} | ${trips(row.roundTrips === null ? null : external)} | ${first === undefined ? '–' : first.flightsPerRequest.toFixed(2)} |`;
  });
  const roundLines = [
    '| round | contender | external-token read req/s | session read req/s | session ÷ external |',
    '|---:|---|---:|---:|---:|',
  ];
  for (let round = 1; round <= rounds; round++) {
    for (const row of sessions.read) {
      const t = row.rounds.find((x) => x.round === round);
      const o = read.find((r) => r.contender === row.contender)?.rounds.find((x) => x.round === round);
      if (t === undefined || o === undefined) continue;
      roundLines.push(
        `| ${round} | ${row.label} | ${num(o.rps)} | ${num(t.rps)} | ${o.rps > 0 ? `${(t.rps / o.rps).toFixed(2)}×` : '–'} |`,
      );
    }
  }
  const probes = sessions.probes.map(
    (p) => `- ${p.contender}: ${p.outcome.ok ? p.outcome.value : `**failed**: ${cell(p.outcome.reason)}`}`,
  );
  return `${title}

The owner read above, \`GET /items?order=id.asc&page_size=20\`, with the access token of one of ${num(sessions.users)} built-in users:
its claims carry \`sid\`, so the server judges it against its per-process cache of the stored user (live sessions,
\`is_admin\`, \`username\`; loaded once per user, then no round trip). The users and their sessions are written
into \`auth_users\` and \`auth_sessions\` after setup (one bcrypt hash shared by all; the \`user_stamp\` a login
stores), their ids those of the owner read's users (the setup admin's id left out), and the tokens minted with the
login's claims. Each round times a contender's external-token read and its session read back to back (swapping
which goes first every other round); the ratio is session ÷ external of the same contender in the same round. Target
on both PostgreSQL paths: ≥ ${SESSION_READ_MIN_RATIO}× and no extra round trip (counted after every user's first request; that first
request loads the user, shown in the last column).

Probes before timing (a session token that would be accepted without the check would fail them):

${probes.join('\n')}

${[...head, ...lines].join('\n')}

${roundLines.join('\n')}`;
}

const STARTUP_LABELS: Readonly<Record<StartupCommand, string>> = {
  bare: '`node -e 0`',
  help: '`rest --help`',
  list: '`rest auth policy list` (SQLite, 3 policies)',
};

/** CLI start-up: each command's time and its ratio to `node -e 0` in the same round. */
export function startupSection(startup: Measured<StartupReport> | undefined): string {
  const title = '## CLI start-up';
  if (startup === undefined) return `${title}\n\nNot measured in this run.`;
  if (!startup.ok) return `${title}\n\n**Not measured**: ${cell(startup.reason)}`;
  const r = startup.value;
  const ratioOf = (c: StartupCommand): string => (c === 'bare' ? '1' : times(r[c]));
  const limitOf = (c: StartupCommand): string => (c === 'bare' ? '' : `≤ ${STARTUP_LIMITS[c]}×`);
  return `${title}

Each command spawned once per round (${r.rounds} rounds, the order rotating), after one untimed spawn of each;
wall-clock time from spawn to exit. The ratio is the command's time ÷ \`node -e 0\`'s in the same round.

| command | ms (median, min–max) | ÷ \`node -e 0\` (median, min–max) | target |
|---|---:|---:|---|
${STARTUP_COMMANDS.map((c) => `| ${STARTUP_LABELS[c]} | ${r.ms[c].median.toFixed(0)} (${r.ms[c].min.toFixed(0)}–${r.ms[c].max.toFixed(0)}) | ${ratioOf(c)} | ${limitOf(c)} |`).join('\n')}`;
}

/** Round trips of each write action, counted outside the timed runs (bench/workloads.ts actionRequests). */
export function actionTripsSection(rows: readonly ActionTrips[] | undefined): string {
  if (rows === undefined || rows.length === 0) return '';
  const actions = rows[0]?.actions.map((a) => a.action) ?? [];
  return [
    'Round trips per request of each write action (counting instance, outside the timed runs): a POST of one row, a',
    "POST of three rows (one leaving columns to their defaults), a PUT by key, a DELETE of the caller's counted rows.",
    '',
    `| contender | ${actions.join(' | ')} |`,
    `|---|${actions.map(() => '---:').join('|')}|`,
    ...rows.map(
      (row) =>
        `| ${row.label} | ${actions.map((a) => trips(row.actions.find((x) => x.action === a)?.trips ?? null)).join(' | ')} |`,
    ),
  ].join('\n');
}

/**
 * How long the run's windows were, as the report states them: `5 rounds of 10 s after a 5 s warm-up
 * per contender`, or `1 round of 200 requests after a warm-up of 50 requests per contender` when
 * they ended after a number of requests; `login` is a sentence for a login window that did.
 */
export function windowsText(c: BenchReport['config']): {
  readonly reads: string;
  readonly writes: string;
  readonly login: string;
  /** True when some window ended after a number of requests instead of a time. */
  readonly counted: boolean;
} {
  const round = windowPhrase(c.roundSeconds, c.roundRequests);
  const warmup =
    c.warmupSeconds !== null
      ? `a ${c.warmupSeconds} s warm-up`
      : `a warm-up of ${windowPhrase(null, c.warmupRequests)}`;
  const logins = c.loginRequests ?? null;
  return {
    reads: `${plural(c.rounds, 'round')} of ${round} after ${warmup} per contender`,
    writes: `${plural(c.writeRounds, 'round')} of ${round}`,
    login:
      logins === null
        ? ''
        : ` Each window ended after a count, not a time: the logins after ${plural(logins, 'login')} (the read beside them when they were done), the read alone after ${plural(READ_ALONE_REQUESTS, 'request')}.`,
    counted: [c.roundRequests, c.warmupRequests, logins].some((n) => n !== null && n !== undefined),
  };
}

export function renderMarkdown(report: BenchReport, chartPath: string): string {
  const m = report.machine;
  const c = report.config;
  // Sampled while the bench ran nothing: the load average would also count its own build and load.
  const busy = Math.max(m.busyShareAtStart, m.busyShareAtEnd) > BUSY_SHARE;
  const full = isFullProtocol(c);
  const rssOf = (row: ScenarioRow): string => {
    const bytes = report.contenders.find((x) => x.id === row.contender)?.peakRssBytes ?? null;
    return bytes === null ? '–' : num(bytes / 2 ** 20);
  };
  const login = report.login;
  const protocol = windowsText(c);
  const loginSection = login.outcome.ok
    ? [
        '| measure | value |',
        '|---|---:|',
        `| logins/s | ${num(login.outcome.value.loginsPerSecond, 1)} |`,
        `| login p50 / p99 ms | ${ms(login.outcome.value.loginP50Ms)} / ${ms(login.outcome.value.loginP99Ms)} |`,
        `| server CPU µs per login | ${orDash(login.outcome.value.cpuUsPerLogin)} |`,
        `| public read (\`GET /\`) alone: req/s, p50 / p99 ms | ${num(login.outcome.value.readAlone.rps)}, ${ms(login.outcome.value.readAlone.p50Ms)} / ${ms(login.outcome.value.readAlone.p99Ms)} |`,
        `| public read during logins: req/s, p50 / p99 ms | ${num(login.outcome.value.readDuringLogins.rps)}, ${ms(login.outcome.value.readDuringLogins.p50Ms)} / ${ms(login.outcome.value.readDuringLogins.p99Ms)} |`,
      ].join('\n')
    : `**failed**: ${cell(login.outcome.reason)}`;

  return `# Benchmarks

Generated by \`${report.command}\` on ${report.startedAt} (${report.mode === 'smoke' ? 'smoke' : full ? 'full' : 'shortened'} run).
CPU in use by other work (2 s samples while the bench ran nothing): ${pct(m.busyShareAtStart)} before, ${pct(m.busyShareAtEnd)} after, on ${m.cores} cores (load average ${m.loadAverageAtStart.toFixed(2)} at start, ${m.loadAverageAtEnd.toFixed(2)} at end).${
    busy
      ? '\n\n> **The machine was busy during this run** (other work was running): treat the numbers as indicative and re-run `npm run bench` on an idle machine.'
      : ''
  }${
    full
      ? ''
      : `\n\n> **Shortened run**: fewer rounds, seconds or rows than the full protocol${protocol.counted ? ', or windows that ended after a number of requests instead of a time' : ''} (${FULL_PROFILE.rounds} read rounds and ${FULL_PROFILE.writeRounds} write rounds of ${FULL_PROFILE.roundSeconds} s, ${FULL_DATA.rows.toLocaleString('en-US')} rows): indicative only.`
  }

![Read req/s and p99 per contender](${chartPath})

## Targets

| target | measured (median, min–max over rounds) | result |
|---|---|---|
${report.targets.map((t) => `| ${cell(t.target)} | ${cell(t.measured)} | ${t.met ? 'met' : '**missed**'} |`).join('\n')}

## Reads: the caller's first 20 rows out of ${num(c.rows)}

\`GET /items?order=id.asc&page_size=20\` with a bearer token of one of ${num(c.users)} users — for \`rest\` the default
policy \`user_id = auth_user.id\` adds the owner filter; the baseline runs
\`SELECT … FROM items WHERE user_id = $1 ORDER BY id LIMIT 20\` itself.

${scenarioTable(report.read, true, rssOf)}

${teamSection(report.team, c.rounds, report.read)}

${sessionSection(report.sessions ?? null, c.rounds, report.read)}

${columnRuleSection(report.columnRules, report.read)}

## Writes: POST a row + PUT one of the caller's rows by key, 1:1

${scenarioTable(report.write, false, rssOf)}

${actionTripsSection(report.tripsByAction)}

${pgrstSection(report.pgrst, { read: c.rounds, write: c.writeRounds }, report.read)}

${poolerSection(report.pooler)}

${hostileSection(report.hostile)}

## Login (bcrypt-bound), ${login.contender}

${login.loginConnections} connections log in as ${login.users} users in turn while ${login.readConnections} connections read the public \`GET /\`;
the same read alone is measured just before.${protocol.login} Target: the read's p99 stays ≤ ${LOGIN_READ_P99_LIMIT_MS} ms.

${loginSection}

## Contenders

${report.contenders.map((x) => `- **${x.label}** — ${x.description}${x.failure === null ? '' : ` — **failed before timing**: ${cell(x.failure)}`}`).join('\n')}

## Rounds

Reads, interleaved A B C D A B C D … (${protocol.reads}):

${roundsTable(report.read)}

Writes (${protocol.writes}):

${roundsTable(report.write)}

## How it is measured

- Data: \`items(id, user_id, title, amount, done, created_at)\`, ${num(c.rows)} rows spread evenly and shuffled over
  ${num(c.users)} users (seeded, identical in PostgreSQL and SQLite), index on \`user_id\`, \`VACUUM ANALYZE\`d; a fresh
  PostgreSQL database with a random name, dropped at the end (\`${report.database.name}\`, dropped: ${report.database.dropped}).
- Load: autocannon in a separate process (\`bench/driver.ts\`), ${c.connections} connections, requests rotating over
  every user's token (shuffled so the connections drift apart); latency percentiles computed from every response's
  hrtime, not autocannon's 1 ms buckets. Each contender answers a correctness probe first (its users see exactly their
  20 rows, 401 without a token and with a forged one; writes: owner filled in, others' rows answer 404) — a contender
  that fails it, or answers anything but 2xx while timed, is reported as failed with the reason.
- Ratios are taken round by round (contender ÷ reference in the same round) and summarised as median (min–max).
- Server CPU µs/req: utime+stime of the server process from \`/proc/<pid>/stat\` over the timed window ÷ responses.
  PostgreSQL CPU µs/req: the same for the client backends of the bench database (\`pg_stat_activity\`); for SQLite
  the database work is inside the server process, so its server CPU includes it.
  Peak RSS: \`VmHWM\` of \`/proc/<pid>/status\` at the end of the run (after every workload the contender served).
- Round trips/req: a second instance of each PostgreSQL contender connects through a counting proxy
  (\`bench/pg-proxy.ts\`) and serves ${c.roundTripRequests === undefined ? 'a few hundred' : num(c.roundTripRequests)} requests of each kind after a warm-up, outside the timed runs. A round trip is a
  burst of client messages sent after the server last spoke (what the client waits for); "msgs" counts the protocol
  messages (Parse/Bind/Execute/Sync…). Pool connection setup and background traffic in that window are included.

## Machine

- CPU: ${m.cpus} × ${m.cores}, memory ${m.memoryGiB.toFixed(1)} GiB, ${m.os}
- Node ${m.node}, PostgreSQL ${m.postgres}, SQLite ${m.sqlite}
- Run from ${report.startedAt} to ${report.finishedAt}

## Command

\`\`\`sh
${report.command}
\`\`\`

\`npm run bench -- --smoke\` is the few-second variant that \`npm run bench:smoke\` checks (\`bench/test/smoke.test.ts\`); it
writes to a temporary directory, leaves the team membership read and the session read out, and ends each window after a number
of requests instead of seconds (a round after ${SMOKE_REQUESTS.round} requests, its warm-up after a quarter of that, the login window after
${SMOKE_REQUESTS.login} logins). Options: \`--pg-url\`, \`--rounds\`, \`--write-rounds\`, \`--duration <s>\` or \`--requests <n>\`, \`--warmup <s>\` or
\`--warmup-requests <n>\`, \`--connections\`, \`--login-duration <s>\` or \`--login-requests <n>\`, \`--out <dir>\`, \`--team on|off\`,
\`--sessions on|off\`, \`--columns on|off\`, \`--pgrst on|off\`, \`--pooler on|off\`, \`--hostile on|off\`, \`--policy-test on|off\`.

${startupSection(report.startup)}

${policyTestSection(report.policyTest)}

## Policy compiler (\`npm run bench:compiler\`)

${report.compilerBench.ok ? `\`\`\`text\n${report.compilerBench.value.trim()}\n\`\`\`` : `Not included: ${report.compilerBench.reason}`}
`;
}
