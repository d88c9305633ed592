// The benchmark's targets (reads against the baseline, native against portable, the team membership
// and session reads, writes in one round trip, CLI start-up), each checked against a run's results:
// met or missed, never hidden. A contender that failed misses every target that names it.

import type {
  ActionTrips,
  ContenderId,
  ContenderReport,
  LoginResult,
  Measured,
  PgrstReport,
  RoundTrips,
  ScenarioRow,
  TargetCheck,
  SessionReport,
  TeamReport,
} from './report-model.js';
import { POOLER_PATHS, POOLER_WORKLOADS, type PoolerReport } from './pooler.js';
import { ratiosByRound, timesText as times } from './report-model.js';
import { STARTUP_LIMITS, type StartupReport } from './startup.js';

export const RSS_LIMIT_BYTES = 200 * 1024 * 1024;
/** "Bounded" made concrete: a number fixed before measuring. */
export const LOGIN_READ_P99_LIMIT_MS = 100;
/** "One round trip per request" as measured: a proxy's count over a window allows this much background traffic. */
export const ONE_ROUND_TRIP = 1.05;
/** A read through the team membership subquery keeps this share of the owner-filter read's req/s. */
export const TEAM_READ_MIN_RATIO = 0.7;
/** The paths the team target names: both PostgreSQL ones. */
export const TEAM_CONTENDERS: readonly ContenderId[] = ['rest-pg-portable', 'rest-pg-rls'];

/** A read with session checks keeps this share of the same read with an external token. */
export const SESSION_READ_MIN_RATIO = 0.95;
/** "No extra round trip": the session read's round trips per request may exceed the external read's by this much. */
export const SESSION_EXTRA_TRIPS_LIMIT = 0.05;

/** A request through `/rest/v1` keeps this share of the same request through the seed dialect. */
export const PGRST_MIN_RATIO = 0.95;
/** The contenders that serve both dialects: every rest contender. */
export const PGRST_CONTENDERS: readonly ContenderId[] = ['rest-pg-portable', 'rest-pg-rls', 'rest-sqlite'];
/** `Prefer: count=exact` may add this many statements per request to the read without it. */
export const COUNT_EXTRA_STATEMENTS = 1;
/** What a proxy's count over a window lets background traffic add to a per-request figure. */
export const BACKGROUND_ALLOWANCE = ONE_ROUND_TRIP - 1;

function rowOf(rows: readonly ScenarioRow[], id: ContenderId): ScenarioRow | undefined {
  return rows.find((r) => r.contender === id);
}

function failureOf(row: ScenarioRow | undefined, id: ContenderId): string | undefined {
  if (row === undefined) return `${id} did not run`;
  return row.outcome.ok ? undefined : `${row.label} failed: ${row.outcome.reason}`;
}

function ratioTarget(
  target: string,
  rows: readonly ScenarioRow[],
  subject: ContenderId,
  reference: ContenderId,
  pick: 'rps' | 'p99',
  met: (median: number) => boolean,
): TargetCheck {
  const a = rowOf(rows, subject);
  const b = rowOf(rows, reference);
  const failed = failureOf(a, subject) ?? failureOf(b, reference);
  if (failed !== undefined || a === undefined || b === undefined)
    return { target, measured: failed ?? 'not run', met: false };
  const ratio = ratiosByRound(a.rounds, b.rounds, (r) => (pick === 'rps' ? r.rps : r.p99Ms));
  if (ratio === null) return { target, measured: 'no common rounds', met: false };
  return { target, measured: times(ratio), met: met(ratio.median) };
}

/** Team read ÷ owner-filter read of the same contender, round by round (same round = same machine state). */
export function teamReadTargets(
  read: readonly ScenarioRow[],
  team: TeamReport | null,
  teamNotRun: string,
): readonly TargetCheck[] {
  return TEAM_CONTENDERS.map((id) => {
    const owner = rowOf(read, id);
    const label = owner?.label ?? id;
    const target = `${label}: team membership read ≥ ${TEAM_READ_MIN_RATIO}× its owner-filter read's req/s`;
    if (team === null) return { target, measured: `not run: ${teamNotRun}`, met: false };
    const row = rowOf(team.read, id);
    const failed =
      (row === undefined ? `the team read of ${id} did not run` : undefined) ??
      (row?.outcome.ok === false ? `team read failed: ${row.outcome.reason}` : undefined) ??
      failureOf(owner, id);
    if (failed !== undefined || row === undefined || owner === undefined)
      return { target, measured: failed ?? 'not run', met: false };
    const ratio = ratiosByRound(row.rounds, owner.rounds, (r) => r.rps);
    if (ratio === null) return { target, measured: 'no common rounds', met: false };
    return { target, measured: times(ratio), met: ratio.median >= TEAM_READ_MIN_RATIO };
  });
}

/**
 * Session read ÷ external-token read of the same PostgreSQL path, round by round, and its round
 * trips per request (steady state, every user cached) against the external-token read's.
 */
export function sessionReadTargets(
  read: readonly ScenarioRow[],
  sessions: SessionReport | null,
  notRun: string,
): readonly TargetCheck[] {
  return TEAM_CONTENDERS.flatMap((id): TargetCheck[] => {
    const owner = rowOf(read, id);
    const label = owner?.label ?? id;
    const rpsTarget = `${label}: session read ≥ ${SESSION_READ_MIN_RATIO}× the external-token read's req/s`;
    const tripsTarget = `${label}: session read adds no round trip to the external-token read`;
    const row = sessions === null ? undefined : rowOf(sessions.read, id);
    const failed =
      (sessions === null ? `not run: ${notRun}` : undefined) ??
      (row === undefined ? `the session read of ${id} did not run` : undefined) ??
      (row?.outcome.ok === false ? `session read failed: ${row.outcome.reason}` : undefined) ??
      failureOf(owner, id);
    if (failed !== undefined || row === undefined || owner === undefined) {
      const measured = failed ?? 'not run';
      return [
        { target: rpsTarget, measured, met: false },
        { target: tripsTarget, measured, met: false },
      ];
    }
    const ratio = ratiosByRound(row.rounds, owner.rounds, (r) => r.rps);
    const a = row.roundTrips;
    const b = owner.roundTrips;
    const trips: TargetCheck =
      a === null || b === null || !a.ok || !b.ok
        ? {
            target: tripsTarget,
            measured: `not measured${a !== null && !a.ok ? `: ${a.reason}` : b !== null && !b.ok ? `: ${b.reason}` : ''}`,
            met: false,
          }
        : {
            target: tripsTarget,
            measured:
              `${a.value.flightsPerRequest.toFixed(2)} vs ${b.value.flightsPerRequest.toFixed(2)} round trips/request` +
              (a.value.firstPass === undefined
                ? ''
                : ` (each user's first request: ${a.value.firstPass.flightsPerRequest.toFixed(2)})`),
            met: a.value.flightsPerRequest <= b.value.flightsPerRequest + SESSION_EXTRA_TRIPS_LIMIT,
          };
    return [
      ratio === null
        ? { target: rpsTarget, measured: 'no common rounds', met: false }
        : { target: rpsTarget, measured: times(ratio), met: ratio.median >= SESSION_READ_MIN_RATIO },
      trips,
    ];
  });
}

const tripsText = (m: Measured<RoundTrips> | null): string =>
  m === null ? 'not measured' : m.ok ? m.value.flightsPerRequest.toFixed(2) : `not measured: ${m.reason}`;

/**
 * The PostgREST dialect against the seed dialect: on every rest contender its owner read and its
 * single-row POST keep PGRST_MIN_RATIO of the seed's, round by round; on both PostgreSQL paths
 * each of its requests (read, counted read, POST) is one round trip, and `Prefer: count=exact`
 * adds at most COUNT_EXTRA_STATEMENTS statements to the read, in that round trip.
 */
export function pgrstTargets(
  read: readonly ScenarioRow[],
  pgrst: PgrstReport | null,
  notRun: string,
): readonly TargetCheck[] {
  const versus = (
    target: string,
    rows: readonly ScenarioRow[] | undefined,
    references: readonly ScenarioRow[] | undefined,
    id: ContenderId,
    what: string,
    seedWhat: string,
  ): TargetCheck => {
    const row = rows === undefined ? undefined : rowOf(rows, id);
    const reference = references === undefined ? undefined : rowOf(references, id);
    const failed =
      (pgrst === null ? `not run: ${notRun}` : undefined) ??
      (row === undefined ? `the ${what} of ${id} did not run` : undefined) ??
      (row?.outcome.ok === false ? `${what} failed: ${row.outcome.reason}` : undefined) ??
      (reference === undefined ? `the ${seedWhat} of ${id} did not run` : undefined) ??
      (reference?.outcome.ok === false ? `${seedWhat} failed: ${reference.outcome.reason}` : undefined);
    if (failed !== undefined || row === undefined || reference === undefined)
      return { target, measured: failed ?? 'not run', met: false };
    const ratio = ratiosByRound(row.rounds, reference.rounds, (r) => r.rps);
    if (ratio === null) return { target, measured: 'no common rounds', met: false };
    return { target, measured: times(ratio), met: ratio.median >= PGRST_MIN_RATIO };
  };
  const speed = PGRST_CONTENDERS.flatMap((id): TargetCheck[] => {
    const label = rowOf(read, id)?.label ?? id;
    return [
      versus(
        `${label}: \`/rest/v1\` read ≥ ${PGRST_MIN_RATIO}× the seed dialect's read req/s`,
        pgrst?.read,
        read,
        id,
        '/rest/v1 read',
        'seed read',
      ),
      versus(
        `${label}: \`/rest/v1\` single-row POST ≥ ${PGRST_MIN_RATIO}× the seed dialect's POST req/s`,
        pgrst?.create,
        pgrst?.seedCreate,
        id,
        '/rest/v1 POST',
        'seed POST',
      ),
    ];
  });
  const trips = TEAM_CONTENDERS.flatMap((id): TargetCheck[] => {
    const label = rowOf(read, id)?.label ?? id;
    const tripsTarget = `${label}: \`/rest/v1\` read, counted read and single-row POST in one round trip per request`;
    const countTarget = `${label}: \`Prefer: count=exact\` adds at most ${COUNT_EXTRA_STATEMENTS} statement to the read, in the same round trip`;
    if (pgrst === null) {
      const measured = `not run: ${notRun}`;
      return [
        { target: tripsTarget, measured, met: false },
        { target: countTarget, measured, met: false },
      ];
    }
    const of = (rows: readonly ScenarioRow[]): Measured<RoundTrips> | null =>
      rowOf(rows, id)?.roundTrips ?? null;
    const counted = [
      ['read', of(pgrst.read)],
      ['counted read', of(pgrst.countedRead)],
      ['POST', of(pgrst.create)],
    ] as const;
    const one = (m: Measured<RoundTrips> | null): boolean =>
      m !== null && m.ok && m.value.flightsPerRequest <= ONE_ROUND_TRIP;
    const plain = of(pgrst.read);
    const count = of(pgrst.countedRead);
    const statements = (m: Measured<RoundTrips>): number | undefined =>
      m.ok ? m.value.statementsPerRequest : undefined;
    const countMeasured = ((): TargetCheck => {
      if (count === null || plain === null || !count.ok || !plain.ok)
        return {
          target: countTarget,
          measured: `counted read ${tripsText(count)}; read ${tripsText(plain)}`,
          met: false,
        };
      const a = statements(count);
      const b = statements(plain);
      if (a === undefined || b === undefined)
        return { target: countTarget, measured: 'statements not counted', met: false };
      return {
        target: countTarget,
        measured: `${a.toFixed(2)} vs ${b.toFixed(2)} statements/request, ${count.value.flightsPerRequest.toFixed(2)} round trips/request`,
        met: a <= b + COUNT_EXTRA_STATEMENTS + BACKGROUND_ALLOWANCE && one(count),
      };
    })();
    return [
      {
        target: tripsTarget,
        measured: counted.map(([what, m]) => `${what} ${tripsText(m)}`).join('; '),
        met: counted.every(([, m]) => one(m)),
      },
      countMeasured,
    ];
  });
  return [...speed, ...trips];
}

export function evaluateTargets(
  read: readonly ScenarioRow[],
  contenders: readonly ContenderReport[],
  login: LoginResult,
  team: TeamReport | null = null,
  teamNotRun = 'the team workload is off (--team off)',
  sessions: SessionReport | null = null,
  sessionsNotRun = 'the session read is off (--sessions off)',
): readonly TargetCheck[] {
  const checks: TargetCheck[] = [
    ratioTarget(
      "portable path (`-db.rls off`) ≥ 1.0× the baseline's req/s",
      read,
      'rest-pg-portable',
      'baseline',
      'rps',
      (m) => m >= 1.0,
    ),
    ratioTarget(
      "native RLS (`-db.rls on`) ≥ 0.85× the portable path's req/s",
      read,
      'rest-pg-rls',
      'rest-pg-portable',
      'rps',
      (m) => m >= 0.85,
    ),
  ];

  const native = rowOf(read, 'rest-pg-rls');
  const trips = native?.roundTrips;
  checks.push({
    target: 'native RLS in one round trip per request',
    measured:
      trips === undefined || trips === null
        ? 'not measured'
        : trips.ok
          ? `${trips.value.flightsPerRequest.toFixed(2)} round trips/request`
          : `not measured: ${trips.reason}`,
    met: trips !== undefined && trips !== null && trips.ok && trips.value.flightsPerRequest <= ONE_ROUND_TRIP,
  });

  checks.push(
    ratioTarget(
      "portable path p99 ≤ 1.5× the baseline's",
      read,
      'rest-pg-portable',
      'baseline',
      'p99',
      (m) => m <= 1.5,
    ),
    ratioTarget(
      "native RLS p99 ≤ 1.5× the baseline's",
      read,
      'rest-pg-rls',
      'baseline',
      'p99',
      (m) => m <= 1.5,
    ),
  );

  for (const c of contenders) {
    if (c.id === 'baseline') continue;
    checks.push({
      target: `${c.label}: peak RSS < 200 MB`,
      measured:
        c.peakRssBytes === null
          ? `not measured${c.failure === null ? '' : `: ${c.failure}`}`
          : `${(c.peakRssBytes / 2 ** 20).toFixed(0)} MB`,
      met: c.peakRssBytes !== null && c.failure === null && c.peakRssBytes < RSS_LIMIT_BYTES,
    });
  }

  checks.push(...teamReadTargets(read, team, teamNotRun));
  checks.push(...sessionReadTargets(read, sessions, sessionsNotRun));

  const outcome = login.outcome;
  checks.push({
    target: `public read p99 stays bounded while logins run (≤ ${LOGIN_READ_P99_LIMIT_MS} ms)`,
    measured: outcome.ok
      ? `${outcome.value.readDuringLogins.p99Ms.toFixed(1)} ms (alone: ${outcome.value.readAlone.p99Ms.toFixed(1)} ms)`
      : `login workload failed: ${outcome.reason}`,
    met: outcome.ok && outcome.value.readDuringLogins.p99Ms <= LOGIN_READ_P99_LIMIT_MS,
  });
  return checks;
}

/** `rest --help` ≤ 3× and `auth policy list` on SQLite ≤ 6× a bare `node -e 0`. */
export function startupTargets(startup: Measured<StartupReport> | undefined): readonly TargetCheck[] {
  const commands = [
    { key: 'help', name: '`rest --help`' },
    { key: 'list', name: '`rest auth policy list` on SQLite' },
  ] as const;
  return commands.map(({ key, name }) => {
    const limit = STARTUP_LIMITS[key];
    const target = `${name} starts within ${limit}× a bare \`node -e 0\``;
    if (startup === undefined) return { target, measured: 'not measured', met: false };
    if (!startup.ok) return { target, measured: `not measured: ${startup.reason}`, met: false };
    const r = startup.value;
    return {
      target,
      measured: `${times(r[key])}; ${r.ms[key].median.toFixed(0)} ms vs ${r.ms.bare.median.toFixed(0)} ms`,
      met: r[key].median <= limit,
    };
  });
}

/** Every write action (one row, several rows, update, delete) in one round trip on each PostgreSQL path. */
export function actionTripTargets(tripsByAction: readonly ActionTrips[]): readonly TargetCheck[] {
  return tripsByAction.map(({ label, actions }) => {
    const target = `${label}: every write action in one round trip per request`;
    const measured = actions
      .map(({ action, trips }) =>
        trips.ok
          ? `${action} ${trips.value.flightsPerRequest.toFixed(2)}`
          : `${action} not measured: ${trips.reason}`,
      )
      .join('; ');
    const met =
      actions.length > 0 &&
      actions.every(({ trips }) => trips.ok && trips.value.flightsPerRequest <= ONE_ROUND_TRIP);
    return { target, measured: measured === '' ? 'not measured' : measured, met };
  });
}

/** Through a transaction-mode pooler, each path keeps this share of its direct connection's req/s. */
export const POOLER_MIN_RATIO = 0.7;

/** Pooled ÷ direct of each PostgreSQL path and workload (median of interleaved rounds). */
export function poolerTargets(pooler: Measured<PoolerReport> | null | undefined): readonly TargetCheck[] {
  return POOLER_PATHS.flatMap((path) =>
    POOLER_WORKLOADS.map((workload): TargetCheck => {
      const what = workload === 'read' ? 'owner read' : 'single-row POST';
      const target = `PostgreSQL ${path} through PgBouncer (\`-db.pooler transaction\`): ${what} ≥ ${POOLER_MIN_RATIO}× the direct connection's req/s`;
      if (pooler === undefined || pooler === null)
        return { target, measured: 'not run: the pooler lane is off (--pooler off)', met: false };
      if (!pooler.ok) return { target, measured: `not run: ${pooler.reason}`, met: false };
      const lane = pooler.value.lanes.find((l) => l.path === path && l.workload === workload);
      if (lane === undefined) return { target, measured: 'not run', met: false };
      return { target, measured: times(lane.ratio), met: lane.ratio.median >= POOLER_MIN_RATIO };
    }),
  );
}
