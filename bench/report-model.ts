// The shape of a bench run's results (written as results.json; BENCHMARKS.md and the chart
// are rendered from it) and the small statistics over rounds.

import type { HostileReport } from './hostile.js';
import type { PoolerReport } from './pooler.js';
import type { PolicyTestReport } from './policy-test-lane.js';
import type { ColumnRuleReport } from './report-column-rules.js';
import type { StartupReport } from './startup.js';

export const CONTENDER_IDS = ['baseline', 'rest-pg-portable', 'rest-pg-rls', 'rest-sqlite'] as const;
export type ContenderId = (typeof CONTENDER_IDS)[number];

export interface RoundSample {
  readonly round: number;
  readonly rps: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Server process CPU (utime+stime) per response; null when /proc was not readable. */
  readonly cpuUsPerRequest: number | null;
  /** CPU of the PostgreSQL backends of the bench database per response; null for SQLite or unreadable. */
  readonly dbCpuUsPerRequest: number | null;
  readonly responses: number;
  readonly non2xx: number;
  readonly errors: number;
}

export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

export interface Summary {
  readonly rps: Spread;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly cpuUsPerRequest: number | null;
  readonly dbCpuUsPerRequest: number | null;
}

/** Round trips counted by the proxy (bench/pg-proxy.ts) over `requests` requests after a warm-up. */
export interface RoundTrips {
  readonly requests: number;
  readonly flightsPerRequest: number;
  readonly messagesPerRequest: number;
  readonly syncsPerRequest: number;
  readonly queriesPerRequest: number;
  /**
   * Statements run: Execute messages plus simple-protocol Queries (a Query holding several
   * statements counts once). Absent in older reports.
   */
  readonly statementsPerRequest?: number;
  readonly newConnections: number;
  /** The counted warm-up before these requests, when the workload asked for one (see round-trips.ts). */
  readonly firstPass?: { readonly requests: number; readonly flightsPerRequest: number };
}

/** Round trips of each write action (bench/workloads.ts COUNTED_ACTIONS) for one PostgreSQL contender. */
export interface ActionTrips {
  readonly contender: ContenderId;
  readonly label: string;
  readonly actions: ReadonlyArray<{ readonly action: string; readonly trips: Measured<RoundTrips> }>;
}

export type Measured<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string };

export interface ScenarioRow {
  readonly contender: ContenderId;
  readonly label: string;
  /** ok: every round completed with only 2xx answers; otherwise the reason, with the rounds done so far. */
  readonly outcome: Measured<Summary>;
  readonly rounds: readonly RoundSample[];
  /** Per-round ratios to the baseline (reads only): req/s and p99. */
  readonly vsBaseline: { readonly rps: Spread; readonly p99: Spread } | null;
  readonly roundTrips: Measured<RoundTrips> | null;
}

export interface LoginResult {
  readonly contender: ContenderId;
  readonly users: number;
  readonly loginConnections: number;
  readonly readConnections: number;
  readonly outcome: Measured<{
    readonly loginsPerSecond: number;
    readonly loginP50Ms: number;
    readonly loginP99Ms: number;
    readonly cpuUsPerLogin: number | null;
    readonly readAlone: { readonly rps: number; readonly p50Ms: number; readonly p99Ms: number };
    readonly readDuringLogins: { readonly rps: number; readonly p50Ms: number; readonly p99Ms: number };
  }>;
}

/** The team membership read of one PostgreSQL contender, timed in the read rounds. */
export interface TeamRow extends ScenarioRow {
  /** Per-round ratios to the same contender's owner-filter read: req/s and p99. */
  readonly vsOwnerRead: { readonly rps: Spread; readonly p99: Spread } | null;
}

export interface TeamReport {
  readonly rows: number;
  readonly teams: number;
  readonly users: number;
  readonly memberships: number;
  readonly policies: readonly {
    readonly table_name: string;
    readonly action: string;
    readonly expression: string;
  }[];
  readonly read: readonly TeamRow[];
}

/**
 * The session read: the owner read with built-in users' session tokens, timed beside
 * the external-token owner read of the same contender in every round; `vsOwnerRead` is session ÷
 * external-token read.
 */
export interface SessionReport {
  /** Built-in users (and sessions) the requests rotate over. */
  readonly users: number;
  /** What the probe showed, e.g. how soon a revoked session was refused, per contender. */
  readonly probes: readonly { readonly contender: ContenderId; readonly outcome: Measured<string> }[];
  readonly read: readonly TeamRow[];
}

/** A request through `/rest/v1`, timed in the same rounds as the same request through the seed dialect. */
export interface DialectRow extends ScenarioRow {
  /** Per-round ratios to the seed dialect's request of the same contender (same round): req/s and p99. */
  readonly vsSeed: { readonly rps: Spread; readonly p99: Spread } | null;
}

/**
 * The PostgREST dialect (docs/postgrest.md) beside the seed dialect on every rest contender: the
 * owner read as `/rest/v1/items?order=id.asc&offset=0&limit=20` (with the read rounds), the same
 * with `Prefer: count=exact`, and a single-row `POST /rest/v1/items` with
 * `Prefer: return=representation` against the seed `POST /items` (with the write rounds).
 */
export interface PgrstReport {
  /** The requests as sent (path and the headers besides Authorization and Content-Type). */
  readonly requests: {
    readonly seedRead: string;
    readonly read: string;
    readonly countedRead: string;
    readonly seedCreate: string;
    readonly create: string;
  };
  /** `/rest/v1` owner read ÷ seed owner read (the read table's row of the contender). */
  readonly read: readonly DialectRow[];
  /** The same read with `Prefer: count=exact`, ÷ the seed owner read. */
  readonly countedRead: readonly DialectRow[];
  /** The seed dialect's single-row `POST /items`, timed in the write rounds. */
  readonly seedCreate: readonly ScenarioRow[];
  /** `POST /rest/v1/items` (`return=representation`) ÷ the seed `POST /items`. */
  readonly create: readonly DialectRow[];
}

export interface ContenderReport {
  readonly id: ContenderId;
  readonly label: string;
  readonly description: string;
  /** Why it could not start or answered wrongly before timing; null when its probes passed. */
  readonly failure: string | null;
  readonly readProbe: Measured<{ readonly checks: number }>;
  readonly peakRssBytes: number | null;
}

export interface TargetCheck {
  readonly target: string;
  readonly measured: string;
  readonly met: boolean;
}

export interface BenchReport {
  readonly version: 1;
  readonly mode: 'full' | 'smoke';
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly command: string;
  readonly machine: {
    readonly cpus: string;
    readonly cores: number;
    readonly memoryGiB: number;
    readonly os: string;
    readonly node: string;
    readonly postgres: string;
    readonly sqlite: string;
    readonly restCommit: string;
    readonly loadAverageAtStart: number;
    readonly loadAverageAtEnd: number;
    /** Share of all cores in use during 2 s before the bench starts anything (0–1): other work. */
    readonly busyShareAtStart: number;
    /** The same, sampled after every contender has stopped. */
    readonly busyShareAtEnd: number;
  };
  readonly config: {
    readonly rows: number;
    readonly users: number;
    readonly connections: number;
    readonly rounds: number;
    readonly writeRounds: number;
    /** Seconds per window; null when the window ended after the `…Requests` count instead. */
    readonly roundSeconds: number | null;
    readonly warmupSeconds: number | null;
    readonly loginSeconds: number | null;
    /** Requests per window (`--requests`, the smoke default); null when timed. Absent in older reports. */
    readonly roundRequests?: number | null;
    readonly warmupRequests?: number | null;
    /** Logins per login window (`--login-requests`); null when timed. Absent in older reports. */
    readonly loginRequests?: number | null;
    /** Requests each contender serves through the counting proxy. Absent in older reports. */
    readonly roundTripRequests?: number;
  };
  readonly database: { readonly name: string; readonly dropped: boolean };
  readonly contenders: readonly ContenderReport[];
  readonly read: readonly ScenarioRow[];
  readonly write: readonly ScenarioRow[];
  readonly login: LoginResult;
  /** The team membership read workload; null when it was not run (`--team off`, smoke default). */
  readonly team: TeamReport | null;
  /** The session read; null when it was not run (`--sessions off`, smoke default). Absent in older reports. */
  readonly sessions?: SessionReport | null;
  /** The column-rule read; null when not run (`--columns off`). Absent in older reports. */
  readonly columnRules?: ColumnRuleReport | null;
  /** The `/rest/v1` lanes; null when not run (`--pgrst off`). Absent in older reports. */
  readonly pgrst?: PgrstReport | null;
  /** Round trips per write action on the PostgreSQL contenders that write. Absent in older reports. */
  readonly tripsByAction?: readonly ActionTrips[];
  readonly targets: readonly TargetCheck[];
  readonly compilerBench: Measured<string>;
  /** CLI start-up against `node -e 0` (bench/startup.ts). Absent in older reports. */
  readonly startup?: Measured<StartupReport>;
  /**
   * Both PostgreSQL paths through PgBouncer against a direct connection (bench/pooler.ts); not ok
   * with the reason when it could not run (PgBouncer not reachable), null when off (`--pooler off`).
   * Absent in older reports.
   */
  readonly pooler?: Measured<PoolerReport> | null;
  /** Failing, abandoned and crowding requests (bench/hostile.ts); null when off. Absent in older reports. */
  readonly hostile?: Measured<HostileReport> | null;
  /** `rest policy test` on a file of 200 cases (bench/policy-test-lane.ts); null when off. Absent in older reports. */
  readonly policyTest?: Measured<PolicyTestReport> | null;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] ?? Number.NaN)
    : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/** A ratio's median with its min–max over rounds, as every report writes it: `1.23× (1.10–1.30)`. */
export const timesText = (s: Spread): string =>
  `${s.median.toFixed(2)}× (${s.min.toFixed(2)}–${s.max.toFixed(2)})`;

export function spread(values: readonly number[]): Spread {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) };
}

export function medianOrNull(values: readonly (number | null)[]): number | null {
  const known = values.filter((v): v is number => v !== null);
  return known.length === values.length && known.length > 0 ? median(known) : null;
}

export function summarize(rounds: readonly RoundSample[]): Summary {
  return {
    rps: spread(rounds.map((r) => r.rps)),
    p50Ms: median(rounds.map((r) => r.p50Ms)),
    p99Ms: median(rounds.map((r) => r.p99Ms)),
    cpuUsPerRequest: medianOrNull(rounds.map((r) => r.cpuUsPerRequest)),
    dbCpuUsPerRequest: medianOrNull(rounds.map((r) => r.dbCpuUsPerRequest)),
  };
}

/** Ratios of `rounds` to `reference` round by round (same round = same machine state). */
export function ratiosByRound(
  rounds: readonly RoundSample[],
  reference: readonly RoundSample[],
  pick: (r: RoundSample) => number,
): Spread | null {
  const ratios = rounds.flatMap((r) => {
    const ref = reference.find((x) => x.round === r.round);
    return ref === undefined || pick(ref) === 0 ? [] : [pick(r) / pick(ref)];
  });
  return ratios.length === 0 ? null : spread(ratios);
}
