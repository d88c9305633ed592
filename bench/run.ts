// `npm run bench`: generates the data, starts every contender as a real server, probes each for
// correctness, counts round trips, then times interleaved rounds (reads — with the session read of
// every rest contender, its `/rest/v1` reads, and the team membership read of the PostgreSQL paths
// in the same rounds —, writes with the seed and `/rest/v1` single-row POSTs, logins) with the load driver in its own process, then
// the lanes on databases of their own (CLI start-up, policy tests, pooler, hostile load, the console's first screen), and writes BENCHMARKS.md, the chart and
// results.json.

import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, tmpdir, totalmem, type } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import pg from 'pg';
import { renderChart } from './chart.js';
import { contenderSpecs, type ContenderSpec } from './contenders.js';
import { startDriver, type Driver } from './driver-client.js';
import type { LoadRequest, LoadResult, LoadWindow } from './driver-protocol.js';
import { generateBenchData, ownedRows, seededRandom, type BenchData } from './generate-data.js';
import {
  isFullProtocol,
  parseBenchOptions,
  READ_ALONE_REQUESTS,
  windowText,
  type BenchOptions,
} from './options.js';
import { backendCpuDelta, openPgBackendMeter, type PgBackendMeter } from './pg-backends.js';
import { createPasswordHasher } from '../runtime/auth/passwords.js';
import { roundOrder } from './lane-order.js';
import {
  probeLogin,
  probePgrstCreate,
  probePgrstReads,
  probeReads,
  probeRevoked,
  probeSessionReads,
  probeTeamReads,
  probeWrites,
} from './probe.js';
import { cpuMicros, machineBusyShare, peakRssBytes } from './proc-stats.js';
import {
  ratiosByRound,
  summarize,
  type ActionTrips,
  type BenchReport,
  type ContenderReport,
  type DialectRow,
  type LoginResult,
  type Measured,
  type PgrstReport,
  type RoundSample,
  type RoundTrips,
  type ScenarioRow,
  type SessionReport,
  type TeamReport,
  type TeamRow,
} from './report-model.js';
import { renderMarkdown } from './report-markdown.js';
import { countRoundTrips } from './round-trips.js';
import { freePort, oneLine, startServer, type ServerProcess } from './server-process.js';
import {
  loadSessionsPostgres,
  loadSessionsSqlite,
  mintSessionTokens,
  newSessionId,
  revokeSessionPostgres,
  revokeSessionSqlite,
  SESSION_CONTENDERS,
  sessionRows,
  sessionUserIds,
  sessionUsers,
  takenUserIdsPostgres,
  takenUserIdsSqlite,
  type SessionUser,
} from './sessions.js';
import {
  COLUMN_RULE_POLICIES,
  COLUMN_RULE_READ_PATH,
  createColumnRuleTable,
  probeColumnRuleReads,
} from './column-rules.js';
import { measurePolicyTest, type PolicyTestReport } from './policy-test-lane.js';
import { COLUMN_RULE_CONTENDERS, columnRuleTargets, type ColumnRuleReport } from './report-column-rules.js';
import { policyTestTable, policyTestTargets } from './report-policy-test.js';
import { measureStartup } from './startup.js';
import {
  consoleFirstScreenTarget,
  firstScreenText,
  measureConsoleFirstScreen,
  type FirstScreenReport,
} from './console-first-screen.js';
import { HOSTILE_FULL, HOSTILE_SMOKE, hostileTable, measureHostile, type HostileReport } from './hostile.js';
import {
  measurePooler,
  POOLER_FULL,
  POOLER_SMOKE,
  poolerTable,
  poolerUnreachable,
  type PoolerReport,
} from './pooler.js';
import {
  actionTripTargets,
  evaluateTargets,
  PGRST_CONTENDERS,
  pgrstTargets,
  poolerTargets,
  startupTargets,
  TEAM_CONTENDERS,
} from './targets.js';
import {
  actionRequests,
  bearer,
  createRequests,
  loginRequests,
  mintToken,
  mintTokens,
  PGRST_COUNT_HEADERS,
  PGRST_READ_PATH,
  PGRST_RETURN_HEADERS,
  pgrstPath,
  PUBLIC_READ,
  READ_PATH,
  readRequests,
  send,
  TEAM_POLICIES,
  TEAM_READ_PATH,
  writeRequests,
  type Credentials,
  type UserToken,
} from './workloads.js';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..', '..');

interface ContenderState {
  readonly spec: ContenderSpec;
  server: ServerProcess | undefined;
  /** Start, setup or probe failure: the contender is left out of every workload. */
  failure: string | undefined;
  readProbe: Measured<{ readonly checks: number }>;
  readFailure: string | undefined;
  writeFailure: string | undefined;
  /** The team membership read: undefined while it may run (PostgreSQL rest contenders, --team on). */
  teamFailure: string | undefined;
  /** The session read: undefined while it may run (rest contenders, --sessions on). */
  sessionFailure: string | undefined;
  /** The column-rule read: undefined while it may run (rest contenders, --columns on). */
  columnFailure: string | undefined;
  /** What the session probes showed (how soon a revoked session was refused). */
  sessionProbe: Measured<string>;
  /** The `/rest/v1` lanes and the seed POST they are compared with: undefined while each may run. */
  pgrstReadFailure: string | undefined;
  pgrstCountFailure: string | undefined;
  seedCreateFailure: string | undefined;
  pgrstCreateFailure: string | undefined;
  readonly readRounds: RoundSample[];
  readonly writeRounds: RoundSample[];
  readonly teamRounds: RoundSample[];
  readonly sessionRounds: RoundSample[];
  readonly columnRounds: RoundSample[];
  readonly pgrstReadRounds: RoundSample[];
  readonly pgrstCountRounds: RoundSample[];
  readonly seedCreateRounds: RoundSample[];
  readonly pgrstCreateRounds: RoundSample[];
  roundTrips: {
    read: Measured<RoundTrips> | null;
    write: Measured<RoundTrips> | null;
    team: Measured<RoundTrips> | null;
    session: Measured<RoundTrips> | null;
    columns: Measured<RoundTrips> | null;
    pgrstRead: Measured<RoundTrips> | null;
    pgrstCount: Measured<RoundTrips> | null;
    pgrstCreate: Measured<RoundTrips> | null;
    /** Each write action of actionRequests, in their order (PostgreSQL contenders that write). */
    actions: ActionTrips['actions'];
  };
  peakRss: number | null;
}

const secondsOf = (w: LoadWindow): number | null => (w.kind === 'seconds' ? w.seconds : null);
const requestsOf = (w: LoadWindow): number | null => (w.kind === 'requests' ? w.requests : null);
const errorText = (e: unknown): string => oneLine(e instanceof Error ? e.message : String(e), 400);
const log = (line: string): void => console.log(line);
const fmt = (v: number, digits = 0): string =>
  v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const isUsable = (c: ContenderState): c is ContenderState & { server: ServerProcess } =>
  c.failure === undefined && c.server !== undefined && c.server.isRunning();

/** Cleanup steps run once, in reverse order, on success, failure or Ctrl-C; late steps run at once. */
class Cleanup {
  readonly #steps: { readonly what: string; readonly run: () => Promise<void> }[] = [];
  #running: Promise<void> | undefined;

  add(what: string, run: () => Promise<void>): void {
    const step = { what, run };
    if (this.#running === undefined) this.#steps.push(step);
    else this.#running = this.#running.then(() => Cleanup.#run(step));
  }

  /** Every caller waits for the same run, so nobody exits while the database is being dropped. */
  runAll(): Promise<void> {
    this.#running ??= (async () => {
      for (const step of [...this.#steps].reverse()) await Cleanup.#run(step);
    })();
    return this.#running;
  }

  static async #run(step: { readonly what: string; readonly run: () => Promise<void> }): Promise<void> {
    await step.run().catch((e: unknown) => console.error(`cleanup: ${step.what} failed: ${errorText(e)}`));
  }
}

/** A contender that cannot be measured is stopped at once and reported with the reason. */
async function markFailed(c: ContenderState, reason: string): Promise<void> {
  c.failure = reason;
  log(`FAILED   ${c.spec.label}: ${reason}`);
  await c.server?.stop();
}

async function startContender(
  c: ContenderState,
  dbUrl: string,
  options: BenchOptions,
  cleanup: Cleanup,
): Promise<void> {
  try {
    const server = await startServer(c.spec.command(dbUrl, await freePort()), options.readyTimeoutMs);
    c.server = server;
    cleanup.add(`stopping ${c.spec.label}`, () => server.stop());
    log(`started  ${c.spec.label} (pid ${server.pid}) at ${server.baseUrl}`);
  } catch (e) {
    await markFailed(c, errorText(e));
  }
}

/** POST /auth/setup (docs/authentication.md): creates the auth tables and the default policies. */
async function setupAuth(c: ContenderState): Promise<boolean> {
  if (!isUsable(c)) return false;
  let reason: string;
  try {
    const answer = await send(c.server.baseUrl, { method: 'POST', path: '/auth/setup', headers: {} });
    if (answer.status === 201) return true;
    reason = `auth setup: POST /auth/setup answered ${answer.status}`;
  } catch (e) {
    reason = `auth setup: ${errorText(e)}`;
  }
  await markFailed(c, reason);
  return false;
}

/** Policies (the README's team pattern, the column rules) through `POST /auth_policies` as an admin, validated like any policy. */
async function addPolicies(
  c: ContenderState,
  adminToken: string,
  policies: readonly { readonly table_name: string; readonly action: string }[],
): Promise<string | undefined> {
  if (!isUsable(c)) return `${c.spec.label} is not running`;
  try {
    for (const policy of policies) {
      const answer = await send(c.server.baseUrl, {
        method: 'POST',
        path: '/auth_policies',
        headers: { ...bearer(adminToken), 'content-type': 'application/json' },
        body: JSON.stringify(policy),
      });
      if (answer.status !== 201) {
        const body = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
        return `POST /auth_policies (${policy.table_name} / ${policy.action}) answered ${answer.status}: ${oneLine(body, 200)}`;
      }
    }
    return undefined;
  } catch (e) {
    return `POST /auth_policies: ${errorText(e)}`;
  }
}

/**
 * Creates the login workload's users as an admin through `/auth_users` (registration from one
 * address is throttled like failed logins, docs/authentication.md).
 */
async function registerUsers(
  baseUrl: string,
  users: readonly Credentials[],
  adminToken: string,
): Promise<string | undefined> {
  for (let i = 0; i < users.length; i += 4) {
    const answers = await Promise.all(
      users.slice(i, i + 4).map((u) =>
        send(baseUrl, {
          method: 'POST',
          path: '/auth_users',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
          body: JSON.stringify(u),
        }),
      ),
    );
    const bad = answers.find((a) => a.status !== 201);
    if (bad !== undefined) return `creating login users: POST /auth_users answered ${bad.status}`;
  }
  return undefined;
}

interface Timed {
  readonly result: LoadResult;
  readonly cpuUsPerRequest: number | null;
  readonly dbCpuUsPerRequest: number | null;
}

function badAnswers(result: LoadResult): string | undefined {
  if (result.responses === 0) {
    return `no response completed within the ${fmt(result.durationSeconds, 2)} s window (${result.errors} connection errors)`;
  }
  if (result.non2xx === 0 && result.errors === 0) return undefined;
  const statuses = Object.entries(result.statusCounts)
    .filter(([code]) => !code.startsWith('2'))
    .map(([code, n]) => `${n}× ${code}`)
    .join(', ');
  return `${result.non2xx} of ${result.responses} responses were not 2xx (${statuses || 'none'}), ${result.errors} connection errors`;
}

async function timed(
  driver: Driver,
  c: ContenderState & { server: ServerProcess },
  meter: PgBackendMeter | undefined,
  requests: readonly LoadRequest[],
  window: LoadWindow,
  connections: number,
): Promise<Timed> {
  const pid = c.server.pid;
  const usesPg = c.spec.database === 'postgres' && meter !== undefined;
  const db0 = usesPg ? await meter.sample() : undefined;
  const cpu0 = cpuMicros(pid);
  const [result] = await driver.run([
    { label: c.spec.id, baseUrl: c.server.baseUrl, connections, window, requests },
  ]);
  const cpu1 = cpuMicros(pid);
  const db1 = usesPg ? await meter.sample() : undefined;
  if (result === undefined) throw new Error('the load driver returned no result');
  const per = (micros: number | undefined): number | null =>
    micros === undefined || result.responses === 0 ? null : micros / result.responses;
  return {
    result,
    cpuUsPerRequest: cpu0 === undefined || cpu1 === undefined ? null : per(cpu1 - cpu0),
    dbCpuUsPerRequest: db0 === undefined || db1 === undefined ? null : per(backendCpuDelta(db0, db1)),
  };
}

const sample = (round: number, t: Timed): RoundSample => ({
  round,
  rps: t.result.rps,
  p50Ms: t.result.latencyMs.p50,
  p99Ms: t.result.latencyMs.p99,
  cpuUsPerRequest: t.cpuUsPerRequest,
  dbCpuUsPerRequest: t.dbCpuUsPerRequest,
  responses: t.result.responses,
  non2xx: t.result.non2xx,
  errors: t.result.errors,
});

function progressLine(
  phase: string,
  round: number,
  rounds: number,
  c: ContenderState,
  s: RoundSample,
  vs?: { readonly sample: RoundSample | undefined; readonly name: string },
): string {
  const parts = [
    `[${phase}] round ${round}/${rounds}`,
    c.spec.label.padEnd(24),
    `${fmt(s.rps).padStart(8)} req/s`,
    `p50 ${s.p50Ms.toFixed(2)} ms`,
    `p99 ${s.p99Ms.toFixed(2)} ms`,
    `cpu ${s.cpuUsPerRequest === null ? '–' : fmt(s.cpuUsPerRequest)} µs/req`,
  ];
  if (s.dbCpuUsPerRequest !== null) parts.push(`pg ${fmt(s.dbCpuUsPerRequest)} µs/req`);
  const ref = vs?.sample;
  if (vs !== undefined && ref !== undefined && ref !== s && ref.rps > 0)
    parts.push(`${(s.rps / ref.rps).toFixed(2)}× ${vs.name}`);
  if (s.non2xx + s.errors > 0) parts.push(`${s.non2xx + s.errors} bad answers`);
  return parts.join('  ');
}

/** One workload of one contender inside a phase's rounds. */
interface Lane {
  /** Shown in the progress lines: `[read]`, `[write]`, `[team]`, `[session]`, `[pgrst read]`, …. */
  readonly tag:
    | 'read'
    | 'write'
    | 'team'
    | 'session'
    | 'columns'
    | 'pgrst read'
    | 'pgrst count'
    | 'create'
    | 'pgrst create';
  readonly c: ContenderState;
  readonly requests: readonly LoadRequest[];
  readonly samples: RoundSample[];
  readonly failureKey:
    | 'readFailure'
    | 'writeFailure'
    | 'teamFailure'
    | 'sessionFailure'
    | 'columnFailure'
    | 'pgrstReadFailure'
    | 'pgrstCountFailure'
    | 'seedCreateFailure'
    | 'pgrstCreateFailure';
  /** Runs in reverse order with the lanes it follows every other round (bench/lane-order.ts). */
  readonly alternate?: boolean;
  /** The sample of this round the progress line compares with, if any. */
  readonly vs?: (thisRound: ReadonlyMap<Lane, RoundSample>) => {
    readonly sample: RoundSample | undefined;
    readonly name: string;
  };
}

function sampleOf(
  thisRound: ReadonlyMap<Lane, RoundSample>,
  c: ContenderState,
  tag: Lane['tag'],
): RoundSample | undefined {
  for (const [lane, s] of thisRound) if (lane.c === c && lane.tag === tag) return s;
  return undefined;
}

/** Warm-up for each lane, then rounds A B C … A B C …; a bad answer takes a lane out. */
async function runPhase(
  lanes: readonly Lane[],
  rounds: number,
  options: BenchOptions,
  driver: Driver,
  meter: PgBackendMeter | undefined,
): Promise<void> {
  const active = (): (Lane & { c: ContenderState & { server: ServerProcess } })[] =>
    lanes.filter(
      (l): l is Lane & { c: ContenderState & { server: ServerProcess } } =>
        isUsable(l.c) && l.c[l.failureKey] === undefined,
    );
  const fail = (l: Lane, reason: string): void => {
    l.c[l.failureKey] = reason;
    log(`FAILED   [${l.tag}] ${l.c.spec.label}: ${reason}`);
  };

  for (const l of active()) {
    try {
      const warm = await timed(driver, l.c, meter, l.requests, options.warmupWindow, options.connections);
      const bad = badAnswers(warm.result);
      if (bad !== undefined) fail(l, `warm-up: ${bad}`);
      else log(`[${l.tag}] warm-up  ${l.c.spec.label.padEnd(24)}  ${fmt(warm.result.rps).padStart(8)} req/s`);
    } catch (e) {
      fail(l, `warm-up: ${errorText(e)}`);
    }
  }
  for (let round = 1; round <= rounds; round++) {
    const thisRound = new Map<Lane, RoundSample>();
    for (const l of roundOrder(active(), round)) {
      try {
        const t = await timed(driver, l.c, meter, l.requests, options.roundWindow, options.connections);
        const s = sample(round, t);
        l.samples.push(s);
        thisRound.set(l, s);
        log(progressLine(l.tag, round, rounds, l.c, s, l.vs?.(thisRound)));
        const bad = badAnswers(t.result);
        if (bad !== undefined) fail(l, `round ${round}: ${bad}`);
        if (!l.c.server.isRunning())
          fail(l, `round ${round}: the server exited: ${l.c.server.outputTail(4)}`);
      } catch (e) {
        fail(l, `round ${round}: ${errorText(e)}`);
      }
    }
  }
}

async function runLogin(
  c: ContenderState,
  users: readonly Credentials[],
  registerFailure: string | undefined,
  options: BenchOptions,
  driver: Driver,
): Promise<LoginResult> {
  const base = {
    contender: c.spec.id,
    users: users.length,
    loginConnections: options.loginConnections,
    readConnections: options.publicReadConnections,
  };
  const failed = (reason: string): LoginResult => {
    log(`FAILED   [login] ${c.spec.label}: ${reason}`);
    return { ...base, outcome: { ok: false, reason } };
  };
  if (!isUsable(c))
    return failed(`${c.spec.label} is not running${c.failure === undefined ? '' : `: ${c.failure}`}`);
  if (registerFailure !== undefined) return failed(registerFailure);
  const first = users[0];
  if (first === undefined) return failed('no login users');
  const probe = await probeLogin(c.server.baseUrl, first);
  if (!probe.ok) return failed(probe.reason);

  // Timed: three windows of the same seconds. Counted: the read alone ends after its requests, the
  // logins after theirs, and the read beside them when they are done.
  const window = options.loginWindow;
  const publicRead = {
    label: 'public read',
    baseUrl: c.server.baseUrl,
    connections: options.publicReadConnections,
    requests: PUBLIC_READ,
  };
  try {
    const [alone] = await driver.run([
      {
        ...publicRead,
        window: window.kind === 'seconds' ? window : { kind: 'requests', requests: READ_ALONE_REQUESTS },
      },
    ]);
    const cpu0 = cpuMicros(c.server.pid);
    const [logins, during] = await driver.run([
      {
        ...publicRead,
        label: 'logins',
        connections: options.loginConnections,
        window,
        requests: loginRequests(users),
      },
      { ...publicRead, window: window.kind === 'seconds' ? window : { kind: 'beside' } },
    ]);
    const cpu1 = cpuMicros(c.server.pid);
    if (alone === undefined || logins === undefined || during === undefined)
      return failed('the load driver returned no result');
    const bad = badAnswers(logins) ?? badAnswers(alone) ?? badAnswers(during);
    if (bad !== undefined) return failed(bad);
    const read = (r: LoadResult) => ({ rps: r.rps, p50Ms: r.latencyMs.p50, p99Ms: r.latencyMs.p99 });
    const value = {
      loginsPerSecond: logins.rps,
      loginP50Ms: logins.latencyMs.p50,
      loginP99Ms: logins.latencyMs.p99,
      // The public reads ran in the same window: their (small) CPU is included.
      cpuUsPerLogin: cpu0 === undefined || cpu1 === undefined ? null : (cpu1 - cpu0) / logins.responses,
      readAlone: read(alone),
      readDuringLogins: read(during),
    };
    log(
      `[login] ${c.spec.label}: ${fmt(value.loginsPerSecond, 1)} logins/s, login p99 ${value.loginP99Ms.toFixed(1)} ms; ` +
        `public read p99 ${value.readAlone.p99Ms.toFixed(2)} ms alone, ${value.readDuringLogins.p99Ms.toFixed(2)} ms during logins`,
    );
    return { ...base, outcome: { ok: true, value } };
  } catch (e) {
    return failed(errorText(e));
  }
}

/** A lane's result: its failure, no completed round, or the summary of its rounds. */
function outcomeOf(failure: string | undefined, rounds: readonly RoundSample[]) {
  if (failure !== undefined) return { ok: false as const, reason: failure };
  if (rounds.length === 0) return { ok: false as const, reason: 'no round completed' };
  return { ok: true as const, value: summarize(rounds) };
}

/** Per-round req/s and p99 ratios of `rounds` to `reference`; null when the rounds do not pair up. */
function ratiosTo(rounds: readonly RoundSample[], reference: readonly RoundSample[]) {
  const rps = ratiosByRound(rounds, reference, (r) => r.rps);
  const p99 = ratiosByRound(rounds, reference, (r) => r.p99Ms);
  return rps === null || p99 === null ? null : { rps, p99 };
}

function scenarioRow(
  c: ContenderState,
  phase: 'read' | 'write',
  baseline: ContenderState | undefined,
): ScenarioRow {
  const rounds = phase === 'read' ? c.readRounds : c.writeRounds;
  const failure = c.failure ?? (phase === 'read' ? c.readFailure : (c.readFailure ?? c.writeFailure));
  const reference = baseline?.readRounds ?? [];
  return {
    contender: c.spec.id,
    label: c.spec.label,
    outcome: outcomeOf(failure, rounds),
    rounds,
    vsBaseline:
      phase === 'read' && reference.length > 0 && rounds.length > 0 ? ratiosTo(rounds, reference) : null,
    roundTrips: phase === 'read' ? c.roundTrips.read : c.roundTrips.write,
  };
}

function teamRow(c: ContenderState): TeamRow {
  return vsOwnerRow(c, c.teamRounds, c.teamFailure, c.roundTrips.team);
}

/** A workload timed beside the contender's owner read, with its per-round ratios to that read. */
function vsOwnerRow(
  c: ContenderState,
  rounds: readonly RoundSample[],
  ownFailure: string | undefined,
  roundTrips: Measured<RoundTrips> | null,
): TeamRow {
  const failure = c.failure ?? ownFailure;
  return {
    contender: c.spec.id,
    label: c.spec.label,
    outcome: outcomeOf(failure, rounds),
    rounds,
    vsBaseline: null,
    vsOwnerRead: c.readRounds.length > 0 && rounds.length > 0 ? ratiosTo(rounds, c.readRounds) : null,
    roundTrips,
  };
}

/** A `/rest/v1` lane's row: its rounds and their per-round ratios to the seed dialect's lane. */
function dialectRow(
  c: ContenderState,
  rounds: readonly RoundSample[],
  ownFailure: string | undefined,
  seedRounds: readonly RoundSample[],
  roundTrips: Measured<RoundTrips> | null,
): DialectRow {
  return {
    contender: c.spec.id,
    label: c.spec.label,
    outcome: outcomeOf(c.failure ?? ownFailure, rounds),
    rounds,
    vsBaseline: null,
    vsSeed: seedRounds.length > 0 && rounds.length > 0 ? ratiosTo(rounds, seedRounds) : null,
    roundTrips,
  };
}

interface SessionData {
  readonly users: number;
  readonly tokens: readonly UserToken[];
  /** Tokens the probe reads with: a few users, and the second session of the last one. */
  readonly probeUsers: readonly UserToken[];
  readonly unknownSessionToken: string;
  readonly login: { readonly userId: number; readonly username: string; readonly password: string };
  /** The second session of the last user, revoked by the probe, and that user's bench session. */
  readonly revoked: { readonly session: SessionUser; readonly token: UserToken; readonly live: UserToken };
}

/**
 * Writes the session users (the owner read's users minus ids already taken by setup) and one
 * session each into the PostgreSQL and SQLite auth tables, plus a second session of the last user
 * for the revocation probe, and mints their tokens; a contender whose database could not take
 * them loses its session read.
 */
async function prepareSessions(
  lanes: readonly ContenderState[],
  authReady: { readonly pg: boolean; readonly sqlite: boolean },
  data: BenchData,
  ownerIds: readonly number[],
  secret: string,
  fail: (c: ContenderState, reason: string) => void,
): Promise<SessionData | undefined> {
  if (lanes.length === 0) return undefined;
  const onDb = (db: 'postgres' | 'sqlite') => lanes.filter((c) => c.spec.database === db);
  for (const [db, ready] of [
    ['postgres', authReady.pg],
    ['sqlite', authReady.sqlite],
  ] as const) {
    if (!ready) for (const c of onDb(db)) fail(c, 'session users not written: auth setup failed');
  }
  try {
    const t0 = performance.now();
    const password = `bench-${randomBytes(9).toString('base64url')}`;
    const hash = await createPasswordHasher().hashPassword(password);
    const taken = new Set<number>();
    if (authReady.pg) for (const id of await takenUserIdsPostgres(data.pgUrl)) taken.add(id);
    if (authReady.sqlite) for (const id of takenUserIdsSqlite(data.sqliteFile)) taken.add(id);
    const users = sessionUsers(sessionUserIds(ownerIds, taken));
    const first = users[0];
    const last = users.at(-1);
    if (first === undefined || last === undefined) throw new Error('no user id is free for a session user');
    const second: SessionUser = { ...last, sid: newSessionId() };
    const rows = sessionRows([...users, second], hash, Date.now());
    const write = async (db: 'postgres' | 'sqlite'): Promise<void> => {
      const ready = db === 'postgres' ? authReady.pg : authReady.sqlite;
      if (!ready || onDb(db).length === 0) return;
      try {
        if (db === 'postgres') await loadSessionsPostgres(data.pgUrl, rows);
        else loadSessionsSqlite(data.sqliteFile, rows);
      } catch (e) {
        for (const c of onDb(db)) fail(c, `writing the session users: ${errorText(e)}`);
      }
    };
    await write('postgres');
    await write('sqlite');
    const tokens = await mintSessionTokens(secret, users);
    const [secondToken] = await mintSessionTokens(secret, [second]);
    const [unknownSessionToken] = await mintSessionTokens(secret, [{ ...first, sid: newSessionId() }]);
    const tokenOf = (userId: number): UserToken =>
      tokens.find((t) => t.userId === userId) ?? { userId, token: '' };
    const middle = users[Math.floor(users.length / 2)] ?? first;
    const loginUser = users[1] ?? first;
    if (secondToken === undefined || unknownSessionToken === undefined) throw new Error('minting failed');
    log(
      `data: ${fmt(users.length)} built-in users with a session each (ids ${first.userId}–${last.userId}), ` +
        `written after setup in ${fmt(performance.now() - t0)} ms`,
    );
    return {
      users: users.length,
      tokens,
      probeUsers: [tokenOf(first.userId), tokenOf(middle.userId), secondToken],
      unknownSessionToken: unknownSessionToken.token,
      login: { userId: loginUser.userId, username: loginUser.username, password },
      revoked: { session: second, token: secondToken, live: tokenOf(last.userId) },
    };
  } catch (e) {
    for (const c of lanes) fail(c, `session users: ${errorText(e)}`);
    return undefined;
  }
}

/** Revokes the probe's session in each database, then every server must refuse it within 3 s. */
async function probeRevocation(
  states: readonly ContenderState[],
  sessions: SessionData,
  data: BenchData,
  fail: (c: ContenderState, reason: string) => void,
): Promise<void> {
  const lanes = states.filter(
    (c): c is ContenderState & { server: ServerProcess } => isUsable(c) && c.sessionFailure === undefined,
  );
  if (lanes.length === 0) return;
  const sid = sessions.revoked.session.sid;
  const now = Date.now();
  for (const db of ['postgres', 'sqlite'] as const) {
    const on = lanes.filter((c) => c.spec.database === db);
    if (on.length === 0) continue;
    try {
      const revoked =
        db === 'postgres'
          ? await revokeSessionPostgres(data.pgUrl, sid, now)
          : revokeSessionSqlite(data.sqliteFile, sid, now);
      if (revoked !== 1) for (const c of on) fail(c, `revoking the probe session changed ${revoked} rows`);
    } catch (e) {
      for (const c of on) fail(c, `revoking the probe session: ${errorText(e)}`);
    }
  }
  await Promise.all(
    lanes.map(async (c) => {
      if (c.sessionFailure !== undefined) return;
      const r = await probeRevoked(c.server.baseUrl, sessions.revoked.token, sessions.revoked.live, 3000);
      if (!r.ok) {
        fail(c, r.reason);
        return;
      }
      c.sessionProbe = {
        ok: true,
        value:
          `session tokens read exactly their users' rows, a never-stored sid got 401, a login's token (with sid) read the same; ` +
          `a session revoked in the database got 401 after ${fmt(r.value.refusedAfterMs)} ms while the user's other session still read`,
      };
      log(`probe ok ${c.spec.label}: a revoked session refused after ${fmt(r.value.refusedAfterMs)} ms`);
    }),
  );
}

/** A lane on servers and databases of its own: its table in the log, or why it did not run. */
async function ownLane<T>(
  name: string,
  measure: () => Promise<T>,
  table: (value: T) => readonly string[],
): Promise<Measured<T>> {
  try {
    const value = await measure();
    for (const line of table(value)) log(line);
    return { ok: true, value };
  } catch (e) {
    log(`[${name}] failed: ${errorText(e)}`);
    return { ok: false, reason: errorText(e) };
  }
}

/** The pooler lane (bench/pooler.ts), with PgBouncer unreachable reported as not run, with why. */
async function poolerLane(options: BenchOptions, restCli: string): Promise<Measured<PoolerReport> | null> {
  if (!options.pooler) return null;
  const unreachable = await poolerUnreachable(options.bouncerUrl);
  if (unreachable !== undefined) {
    log(`[pooler] not run: ${unreachable}`);
    return { ok: false, reason: unreachable };
  }
  const protocol = options.mode === 'smoke' ? POOLER_SMOKE : POOLER_FULL;
  const { pgAdminUrl, bouncerUrl, readyTimeoutMs } = options;
  const driverScript = join(here, 'driver.js');
  const progress = (line: string): void => log(`[pooler] ${line}`);
  return ownLane(
    'pooler',
    () =>
      measurePooler({ pgAdminUrl, bouncerUrl, restCli, driverScript, readyTimeoutMs, progress, ...protocol }),
    poolerTable,
  );
}

/** The policy-test lane (bench/policy-test-lane.ts): its table in the log, or why it did not run. */
async function policyTestLane(
  options: BenchOptions,
  restCli: string,
): Promise<Measured<PolicyTestReport> | null> {
  if (options.policyTestRuns === 0) return null;
  const { pgAdminUrl, policyTestRuns: runs } = options;
  return ownLane(
    'policy test',
    () => measurePolicyTest({ restCli, pgAdminUrl, runs }),
    (r) => [policyTestTable(r)],
  );
}

/** The hostile-load lane (bench/hostile.ts); a path it could not measure is a row with the reason. */
async function hostileLane(options: BenchOptions, restCli: string): Promise<Measured<HostileReport> | null> {
  if (!options.hostile) return null;
  const protocol = options.mode === 'smoke' ? HOSTILE_SMOKE : HOSTILE_FULL;
  const { pgAdminUrl, mysqlUrl, readyTimeoutMs } = options;
  const driverScript = join(here, 'driver.js');
  return ownLane(
    'hostile',
    () =>
      measureHostile({
        pgAdminUrl,
        mysqlUrl,
        restCli,
        driverScript,
        readyTimeoutMs,
        progress: log,
        ...protocol,
      }),
    hostileTable,
  );
}

function compilerBench(options: BenchOptions): Promise<Measured<string>> {
  if (!options.runCompilerBench) return Promise.resolve({ ok: false, reason: 'not run in smoke mode' });
  const script = join(here, 'compiler-bench.js');
  if (!existsSync(script))
    return Promise.resolve({ ok: false, reason: `${relative(repoRoot, script)} does not exist` });
  log('running the policy compiler micro-benchmark (npm run bench:compiler)');
  return new Promise((resolve) => {
    execFile(process.execPath, [script], { timeout: 300_000, maxBuffer: 4 * 1024 * 1024 }, (err, stdout) => {
      resolve(err ? { ok: false, reason: `it failed: ${errorText(err)}` } : { ok: true, value: stdout });
    });
  });
}

type MachineAtStart = Omit<
  BenchReport['machine'],
  'loadAverageAtEnd' | 'busyShareAtStart' | 'busyShareAtEnd'
>;

async function machineInfo(pgUrl: string): Promise<MachineAtStart> {
  const cpuList = cpus();
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  const { rows } = await client
    .query<{ server_version: string }>('SHOW server_version')
    .finally(() => client.end());
  const memory = new Database(':memory:');
  const sqlite = (memory.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v;
  memory.close();
  let restCommit = 'unknown';
  try {
    restCommit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: repoRoot,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    // Not a git checkout (e.g. an installed package): the commit stays unknown.
  }
  return {
    cpus: cpuList[0]?.model.trim() ?? 'unknown',
    cores: cpuList.length,
    memoryGiB: totalmem() / 2 ** 30,
    os: `${type()} ${release()}`,
    node: process.version,
    postgres: rows[0]?.server_version ?? 'unknown',
    sqlite,
    restCommit,
    loadAverageAtStart: loadavg()[0] ?? 0,
  };
}

/** The report shows the exact command, but never a password given in a database URL. */
function withoutPassword(arg: string): string {
  try {
    const url = new URL(arg);
    if (url.password === '') return arg;
    url.password = '***';
    return url.toString();
  } catch {
    return arg;
  }
}

interface OutputPaths {
  readonly markdown: string;
  readonly chart: string;
  readonly json: string;
}

function outputPaths(options: BenchOptions): OutputPaths {
  const dir =
    options.outDir ??
    (options.mode === 'smoke' ? mkdtempSync(join(tmpdir(), 'rest-bench-smoke-')) : undefined);
  if (dir === undefined) {
    return {
      markdown: join(repoRoot, 'BENCHMARKS.md'),
      chart: join(repoRoot, 'bench', 'chart.svg'),
      json: join(repoRoot, 'bench', 'results.json'),
    };
  }
  mkdirSync(dir, { recursive: true });
  return {
    markdown: join(dir, 'BENCHMARKS.md'),
    chart: join(dir, 'chart.svg'),
    json: join(dir, 'results.json'),
  };
}

async function main(): Promise<number> {
  const options = parseBenchOptions(process.argv.slice(2), process.env);
  const startedAt = new Date().toISOString();
  const paths = outputPaths(options);
  const cleanup = new Cleanup();
  const onSignal = (): void => {
    log('interrupted: stopping servers and dropping the bench database');
    void cleanup.runAll().then(() => process.exit(130));
  };
  process.once('SIGINT', onSignal).once('SIGTERM', onSignal);

  const workDir = mkdtempSync(join(tmpdir(), 'rest-bench-'));
  cleanup.add('removing the work directory', async () => rmSync(workDir, { recursive: true, force: true }));
  const secret = randomBytes(32).toString('hex');
  const restCli = resolve(options.restCli ?? join(repoRoot, 'dist', 'cli', 'main.js'));
  const specs = contenderSpecs({ baselineScript: join(here, 'baseline-server.js'), restCli, secret });
  const states: ContenderState[] = specs.map((spec) => ({
    spec,
    server: undefined,
    failure:
      spec.id !== 'baseline' && !existsSync(restCli)
        ? `${restCli} does not exist (run npm run build)`
        : undefined,
    readProbe: { ok: false, reason: 'not probed' },
    readFailure: undefined,
    writeFailure: undefined,
    teamFailure:
      options.team === undefined
        ? 'the team workload is off (--team off)'
        : TEAM_CONTENDERS.includes(spec.id)
          ? undefined
          : 'the team workload runs on the PostgreSQL paths only',
    readRounds: [],
    writeRounds: [],
    sessionFailure: !options.sessions
      ? 'the session read is off (--sessions off)'
      : SESSION_CONTENDERS.includes(spec.id)
        ? undefined
        : 'the session read runs on the rest contenders only',
    sessionProbe: { ok: false, reason: 'not probed' },
    columnFailure: !options.columns
      ? 'the column-rule read is off (--columns off)'
      : COLUMN_RULE_CONTENDERS.includes(spec.id)
        ? undefined
        : 'the column-rule read runs on the rest contenders only',
    columnRounds: [],
    ...((): Pick<
      ContenderState,
      'pgrstReadFailure' | 'pgrstCountFailure' | 'seedCreateFailure' | 'pgrstCreateFailure'
    > => {
      const off = !options.pgrst
        ? 'the /rest/v1 lanes are off (--pgrst off)'
        : PGRST_CONTENDERS.includes(spec.id)
          ? undefined
          : 'the /rest/v1 lanes run on the rest contenders only';
      return {
        pgrstReadFailure: off,
        pgrstCountFailure: off,
        seedCreateFailure: off,
        pgrstCreateFailure: off,
      };
    })(),
    teamRounds: [],
    sessionRounds: [],
    pgrstReadRounds: [],
    pgrstCountRounds: [],
    seedCreateRounds: [],
    pgrstCreateRounds: [],
    roundTrips: {
      read: null,
      write: null,
      team: null,
      session: null,
      columns: null,
      pgrstRead: null,
      pgrstCount: null,
      pgrstCreate: null,
      actions: [],
    },
    peakRss: null,
  }));
  const stateOf = (id: ContenderSpec['id']): ContenderState => {
    const state = states.find((s) => s.spec.id === id);
    if (state === undefined) throw new Error(`no contender ${id}`);
    return state;
  };

  log(
    `rest bench (${options.mode}): ${options.data.rows.toLocaleString('en-US')} rows over ${options.data.users} users, ` +
      `${options.rounds} read rounds and ${options.writeRounds} write rounds of ${windowText(options.roundWindow)}, ${options.connections} connections`,
  );
  let data: BenchData | undefined;
  let dropped = false;
  const busyShareAtStart = await machineBusyShare();
  try {
    const t0 = performance.now();
    data = await generateBenchData({
      pgAdminUrl: options.pgAdminUrl,
      dir: workDir,
      shape: options.data,
      team: options.team,
    });
    const generated = data;
    cleanup.add(`dropping database ${generated.pgDatabase}`, async () => {
      await generated.drop();
      dropped = true;
    });
    log(
      `data: ${generated.pgDatabase} loaded in ${fmt(generated.loadMillis.postgres)} ms, SQLite in ${fmt(generated.loadMillis.sqlite)} ms ` +
        `(${fmt(performance.now() - t0)} ms total)`,
    );
    const teamData = generated.team;
    if (teamData !== undefined) {
      log(
        `data: team_items ${fmt(teamData.shape.rows)} rows over ${fmt(teamData.shape.teams)} teams, ` +
          `${fmt(teamData.shape.users)} users in ${fmt(teamData.memberships)} memberships (PostgreSQL, in ${fmt(teamData.loadMillis)} ms)`,
      );
    }
    const columnLanes = states.filter((c) => c.columnFailure === undefined);
    const failColumns = (c: ContenderState, reason: string): void => {
      if (c.columnFailure !== undefined) return;
      c.columnFailure = reason;
      log(`FAILED   [columns] ${c.spec.label}: ${reason}`);
    };
    if (columnLanes.length > 0) {
      // Before the servers start: each finds the table when it reads the schema.
      try {
        await createColumnRuleTable(generated.pgUrl, generated.sqliteFile);
      } catch (e) {
        for (const c of columnLanes) failColumns(c, `creating the column-rule table: ${errorText(e)}`);
      }
    }
    const machine = await machineInfo(generated.pgUrl);

    const userIds = Array.from({ length: options.data.users }, (_, i) => i + 1);
    const tokens = await mintTokens(secret, userIds);
    const tokenOf = (userId: number): UserToken => tokens[userId - 1] ?? { userId, token: '' };
    const forged = await mintToken(randomBytes(32).toString('hex'), 1);
    const reads = readRequests(tokens, seededRandom(11));
    const writes = writeRequests(tokens, generated.firstIds, seededRandom(13));
    const actionLists = actionRequests(tokens, generated.firstIds, seededRandom(17));
    // The `/rest/v1` requests: the owner read's users in the owner read's order, the POSTs likewise.
    const pgrstReads = readRequests(tokens, seededRandom(11), PGRST_READ_PATH);
    const pgrstCounts = readRequests(tokens, seededRandom(11), PGRST_READ_PATH, PGRST_COUNT_HEADERS);
    const seedCreates = createRequests(tokens, seededRandom(29), 'seed');
    const pgrstCreates = createRequests(tokens, seededRandom(29), 'pgrst');
    const teamTokens =
      teamData === undefined
        ? []
        : await mintTokens(
            secret,
            Array.from({ length: teamData.shape.users }, (_, i) => i + 1),
          );
    const teamReads = readRequests(teamTokens, seededRandom(19), TEAM_READ_PATH);
    // An external token with `is_admin` (docs/authentication.md): the admin who writes the team policies.
    const adminToken = await mintToken(secret, 999_999_999, 3600, { is_admin: true });
    const teamLanes = states.filter((c) => c.teamFailure === undefined);
    const failTeam = (reason: string): void => {
      for (const c of teamLanes) {
        if (c.teamFailure !== undefined) continue;
        c.teamFailure = reason;
        log(`FAILED   [team] ${c.spec.label}: ${reason}`);
      }
    };
    const loginUsers: Credentials[] = Array.from({ length: options.loginUsers }, (_, i) => ({
      username: `bench_user_${i + 1}`,
      password: `bench-${randomBytes(9).toString('base64url')}`,
    }));

    const driver = await startDriver(join(here, 'driver.js'));
    cleanup.add('stopping the load driver', () => driver.close());
    const meter = await openPgBackendMeter(generated.pgUrl, generated.pgDatabase);
    cleanup.add('closing the PostgreSQL meter', () => meter.close());

    // Auth setup goes through the portable server first: the native one reads the policies on start.
    const portable = stateOf('rest-pg-portable');
    const native = stateOf('rest-pg-rls');
    const sqlite = stateOf('rest-sqlite');
    await Promise.all([
      portable.failure === undefined
        ? startContender(portable, generated.pgUrl, options, cleanup)
        : undefined,
      startContender(stateOf('baseline'), generated.pgUrl, options, cleanup),
      sqlite.failure === undefined
        ? startContender(sqlite, generated.sqliteUrl, options, cleanup)
        : undefined,
    ]);
    const [pgSetupDone, sqliteSetupDone] = await Promise.all([setupAuth(portable), setupAuth(sqlite)]);
    // The team policies too, before the native server starts and reads them.
    let teamPoliciesAdded = false;
    if (pgSetupDone && teamLanes.length > 0) {
      const failed = await addPolicies(portable, adminToken, TEAM_POLICIES);
      if (failed === undefined) teamPoliciesAdded = true;
      else failTeam(failed);
    }
    // The column rules likewise, in each database: PostgreSQL through the portable server.
    const addColumnRules = async (through: ContenderState, db: 'postgres' | 'sqlite'): Promise<void> => {
      const lanes = columnLanes.filter((c) => c.spec.database === db && c.columnFailure === undefined);
      if (lanes.length === 0) return;
      const failed = await addPolicies(through, adminToken, COLUMN_RULE_POLICIES);
      if (failed !== undefined) for (const c of lanes) failColumns(c, failed);
    };
    if (pgSetupDone) await addColumnRules(portable, 'postgres');
    if (sqliteSetupDone) await addColumnRules(sqlite, 'sqlite');
    if (native.failure === undefined) await startContender(native, generated.pgUrl, options, cleanup);
    const nativeSetupDone = !pgSetupDone && (await setupAuth(native));
    if (nativeSetupDone && teamLanes.length > 0) {
      const failed = await addPolicies(native, adminToken, TEAM_POLICIES);
      if (failed === undefined) teamPoliciesAdded = true;
      else failTeam(failed);
    }
    if (nativeSetupDone) await addColumnRules(native, 'postgres');
    if (!teamPoliciesAdded) failTeam('the team policies were not written: auth setup failed');
    for (const c of columnLanes) {
      const setUp = c.spec.database === 'sqlite' ? sqliteSetupDone : pgSetupDone || nativeSetupDone;
      if (!setUp) failColumns(c, 'the column rules were not written: auth setup failed');
    }

    // The session read's built-in users, written after setup and before a registration takes their ids.
    const failSession = (c: ContenderState, reason: string): void => {
      c.sessionProbe = { ok: false, reason };
      if (c.sessionFailure !== undefined) return;
      c.sessionFailure = reason;
      log(`FAILED   [session] ${c.spec.label}: ${reason}`);
    };
    const sessionData = await prepareSessions(
      states.filter((c) => c.sessionFailure === undefined),
      { pg: pgSetupDone || nativeSetupDone, sqlite: sqliteSetupDone },
      generated,
      userIds,
      secret,
      failSession,
    );
    const sessionReads = readRequests(sessionData?.tokens ?? [], seededRandom(23));
    // The owner read's users in the owner read's order, on the table with column rules.
    const columnReads = readRequests(tokens, seededRandom(11), COLUMN_RULE_READ_PATH);
    const registerFailure = isUsable(portable)
      ? await registerUsers(portable.server.baseUrl, loginUsers, adminToken)
      : undefined;

    const probeUsers = [1, Math.ceil(options.data.users / 2), options.data.users].map(tokenOf);
    const failPgrst = (
      c: ContenderState,
      keys: readonly (
        'pgrstReadFailure' | 'pgrstCountFailure' | 'seedCreateFailure' | 'pgrstCreateFailure'
      )[],
      reason: string,
    ): void => {
      for (const key of keys) {
        if (c[key] !== undefined) continue;
        c[key] = reason;
        log(`FAILED   [${key}] ${c.spec.label}: ${reason}`);
      }
    };
    for (const c of states) {
      if (!isUsable(c)) continue;
      c.readProbe = await probeReads(c.server.baseUrl, probeUsers, forged, generated.firstIds);
      if (!c.readProbe.ok) {
        await markFailed(c, c.readProbe.reason);
        continue;
      }
      log(`probe ok ${c.spec.label}: ${c.readProbe.value.checks} read checks`);
      // Before any write: the counted read's totals are the rows each probed user was given.
      if (c.pgrstReadFailure === undefined || c.pgrstCountFailure === undefined) {
        const p = await probePgrstReads(c.server.baseUrl, probeUsers, forged, generated.firstIds, (id) =>
          ownedRows(options.data, id),
        );
        if (p.ok) log(`probe ok ${c.spec.label}: ${p.value.checks} /rest/v1 read checks`);
        else failPgrst(c, ['pgrstReadFailure', 'pgrstCountFailure'], p.reason);
      }
      if (c.spec.writes) {
        const w = await probeWrites(c.server.baseUrl, tokenOf(2), tokenOf(3), generated.firstIds);
        if (w.ok) log(`probe ok ${c.spec.label}: ${w.value.checks} write checks`);
        else {
          c.writeFailure = w.reason;
          log(`FAILED   [write] ${c.spec.label}: ${w.reason}`);
          failPgrst(c, ['seedCreateFailure'], w.reason);
        }
        if (c.pgrstCreateFailure === undefined) {
          // Another user than the read probes', so their counts stay those of the data.
          const p = await probePgrstCreate(c.server.baseUrl, tokenOf(3));
          if (p.ok) log(`probe ok ${c.spec.label}: ${p.value.checks} /rest/v1 write check`);
          else failPgrst(c, ['pgrstCreateFailure'], p.reason);
        }
      }
      if (c.sessionFailure === undefined && sessionData !== undefined) {
        const s = await probeSessionReads(
          c.server.baseUrl,
          sessionData.probeUsers,
          forged,
          sessionData.unknownSessionToken,
          sessionData.login,
          generated.firstIds,
        );
        if (s.ok) log(`probe ok ${c.spec.label}: ${s.value.checks} session read checks`);
        else failSession(c, s.reason);
      }
      if (c.columnFailure === undefined) {
        const p = await probeColumnRuleReads(c.server.baseUrl, probeUsers);
        if (p.ok) log(`probe ok ${c.spec.label}: ${p.value.checks} column-rule read checks`);
        else failColumns(c, p.reason);
      }
      if (c.teamFailure === undefined && teamData !== undefined) {
        const teamProbeUsers = [1, Math.ceil(teamData.shape.users / 2), teamData.shape.users].map(
          (userId) => teamTokens[userId - 1] ?? { userId, token: '' },
        );
        const t = await probeTeamReads(c.server.baseUrl, teamProbeUsers, forged, teamData.firstIds);
        if (t.ok) log(`probe ok ${c.spec.label}: ${t.value.checks} team read checks`);
        else {
          c.teamFailure = t.reason;
          log(`FAILED   [team] ${c.spec.label}: ${t.reason}`);
        }
      }
    }

    // A session revoked in the database (as logout does) is refused by every server process.
    if (sessionData !== undefined) await probeRevocation(states, sessionData, generated, failSession);

    // Each counting instance has its own proxy, so they can run side by side (counts, not timings).
    const counted = states.filter((c) => isUsable(c) && c.spec.database === 'postgres');
    await Promise.all(
      counted.map(async (c) => {
        const workloads = [
          { name: 'read', requests: reads },
          // The write mix, then each write action alone (a DELETE of the rows the creates before it made).
          ...(c.spec.writes && c.writeFailure === undefined
            ? [
                { name: 'write', requests: writes },
                ...[...actionLists].map(([action, requests]) => ({ name: `action ${action}`, requests })),
              ]
            : []),
          ...(c.teamFailure === undefined ? [{ name: 'team', requests: teamReads }] : []),
          // One request per user first (each loads its user once), then counted: every user cached.
          ...(c.sessionFailure === undefined
            ? [{ name: 'session', requests: sessionReads, warmup: sessionReads.length }]
            : []),
          ...(c.columnFailure === undefined ? [{ name: 'columns', requests: columnReads }] : []),
          ...(c.pgrstReadFailure === undefined ? [{ name: 'pgrst read', requests: pgrstReads }] : []),
          ...(c.pgrstCountFailure === undefined ? [{ name: 'pgrst count', requests: pgrstCounts }] : []),
          ...(c.pgrstCreateFailure === undefined && c.spec.writes
            ? [{ name: 'pgrst create', requests: pgrstCreates }]
            : []),
        ];
        const trips = await countRoundTrips(
          c.spec.command,
          generated.pgUrl,
          workloads,
          options.roundTripRequests,
          options.readyTimeoutMs,
        );
        c.roundTrips = {
          read: trips.get('read') ?? null,
          write: trips.get('write') ?? null,
          team: trips.get('team') ?? null,
          session: trips.get('session') ?? null,
          columns: trips.get('columns') ?? null,
          pgrstRead: trips.get('pgrst read') ?? null,
          pgrstCount: trips.get('pgrst count') ?? null,
          pgrstCreate: trips.get('pgrst create') ?? null,
          actions: [...actionLists.keys()].flatMap((action) => {
            const counted = trips.get(`action ${action}`);
            return counted === undefined ? [] : [{ action, trips: counted }];
          }),
        };
        const show = (m: Measured<RoundTrips> | null): string =>
          m === null
            ? '–'
            : m.ok
              ? `${m.value.flightsPerRequest.toFixed(2)} round trips, ${m.value.messagesPerRequest.toFixed(1)} messages`
              : `not measured (${m.reason})`;
        log(
          `trips    ${c.spec.label}: read ${show(c.roundTrips.read)}; write ${show(c.roundTrips.write)}` +
            (c.roundTrips.team === null ? '' : `; team read ${show(c.roundTrips.team)}`) +
            (c.roundTrips.session === null
              ? ''
              : `; session read ${show(c.roundTrips.session)}` +
                (c.roundTrips.session.ok && c.roundTrips.session.value.firstPass !== undefined
                  ? ` (${c.roundTrips.session.value.firstPass.flightsPerRequest.toFixed(2)} on each user's first request)`
                  : '')) +
            (c.roundTrips.columns === null ? '' : `; column-rule read ${show(c.roundTrips.columns)}`),
        );
        const { pgrstRead, pgrstCount, pgrstCreate } = c.roundTrips;
        if (pgrstRead !== null || pgrstCount !== null || pgrstCreate !== null) {
          const statements = (m: Measured<RoundTrips> | null): string =>
            m !== null && m.ok
              ? `, ${(m.value.statementsPerRequest ?? Number.NaN).toFixed(2)} statements`
              : '';
          log(
            `trips    ${c.spec.label}: /rest/v1 read ${show(pgrstRead)}${statements(pgrstRead)}; ` +
              `counted read ${show(pgrstCount)}${statements(pgrstCount)}; POST ${show(pgrstCreate)}`,
          );
        }
        if (c.roundTrips.actions.length > 0) {
          log(
            `trips    ${c.spec.label}: ${c.roundTrips.actions.map(({ action, trips: t }) => `${action} ${show(t)}`).join('; ')}`,
          );
        }
      }),
    );

    // Rounds A B C D (owner-filter read) then the team read of the PostgreSQL paths, in every round:
    // a team read and its owner read are compared within one round (same machine state).
    const readLanes: Lane[] = states.map((c) => ({
      tag: 'read',
      c,
      requests: reads,
      samples: c.readRounds,
      failureKey: 'readFailure',
      vs: (thisRound) => ({ sample: sampleOf(thisRound, stateOf('baseline'), 'read'), name: 'baseline' }),
    }));
    const teamReadLanes: Lane[] = teamLanes.map((c) => ({
      tag: 'team',
      c,
      requests: teamReads,
      samples: c.teamRounds,
      failureKey: 'teamFailure',
      vs: (thisRound) => ({ sample: sampleOf(thisRound, c, 'read'), name: 'owner read' }),
    }));
    // The session read of a contender right after its external-token read (swapped every other round).
    const sessionLaneOf = (c: ContenderState): Lane[] =>
      c.sessionFailure !== undefined
        ? []
        : [
            {
              tag: 'session',
              c,
              requests: sessionReads,
              samples: c.sessionRounds,
              failureKey: 'sessionFailure',
              alternate: true,
              vs: (thisRound) => ({ sample: sampleOf(thisRound, c, 'read'), name: 'external-token read' }),
            },
          ];
    // The column-rule read of a contender beside its plain owner read, in the same group.
    const columnLaneOf = (c: ContenderState): Lane[] =>
      c.columnFailure !== undefined
        ? []
        : [
            {
              tag: 'columns',
              c,
              requests: columnReads,
              samples: c.columnRounds,
              failureKey: 'columnFailure',
              alternate: true,
              vs: (thisRound) => ({ sample: sampleOf(thisRound, c, 'read'), name: 'plain read' }),
            },
          ];
    // The `/rest/v1` reads of a contender beside its seed read, in the same group as the session read.
    const pgrstReadLaneOf = (c: ContenderState, tag: 'pgrst read' | 'pgrst count'): Lane[] => {
      const failureKey = tag === 'pgrst read' ? 'pgrstReadFailure' : 'pgrstCountFailure';
      if (c[failureKey] !== undefined) return [];
      return [
        {
          tag,
          c,
          requests: tag === 'pgrst read' ? pgrstReads : pgrstCounts,
          samples: tag === 'pgrst read' ? c.pgrstReadRounds : c.pgrstCountRounds,
          failureKey,
          alternate: true,
          vs: (thisRound) => ({ sample: sampleOf(thisRound, c, 'read'), name: 'seed read' }),
        },
      ];
    };
    await runPhase(
      [
        ...readLanes.flatMap((l) => [
          l,
          ...pgrstReadLaneOf(l.c, 'pgrst read'),
          ...sessionLaneOf(l.c),
          ...columnLaneOf(l.c),
          ...pgrstReadLaneOf(l.c, 'pgrst count'),
        ]),
        ...teamReadLanes,
      ],
      options.rounds,
      options,
      driver,
      meter,
    );
    // The write mix, then the seed POST and the `/rest/v1` POST of one row (swapped every other round).
    await runPhase(
      states
        .filter((c) => c.spec.writes && c.readFailure === undefined)
        .flatMap((c): Lane[] => [
          { tag: 'write', c, requests: writes, samples: c.writeRounds, failureKey: 'writeFailure' },
          ...(c.seedCreateFailure === undefined
            ? [
                {
                  tag: 'create',
                  c,
                  requests: seedCreates,
                  samples: c.seedCreateRounds,
                  failureKey: 'seedCreateFailure',
                } as const,
              ]
            : []),
          ...(c.pgrstCreateFailure === undefined
            ? [
                {
                  tag: 'pgrst create',
                  c,
                  requests: pgrstCreates,
                  samples: c.pgrstCreateRounds,
                  failureKey: 'pgrstCreateFailure',
                  alternate: true,
                  vs: (thisRound: ReadonlyMap<Lane, RoundSample>) => ({
                    sample: sampleOf(thisRound, c, 'create'),
                    name: 'seed POST',
                  }),
                } as const,
              ]
            : []),
        ]),
      options.writeRounds,
      options,
      driver,
      meter,
    );
    const login = await runLogin(portable, loginUsers, registerFailure, options, driver);

    for (const c of states) {
      if (c.server !== undefined && c.server.isRunning()) c.peakRss = peakRssBytes(c.server.pid) ?? null;
    }
    // All at once, not one after another as the cleanup steps run (their stop steps are no-ops then).
    await Promise.all(states.flatMap((c) => (c.server === undefined ? [] : [c.server.stop()])));
    await cleanup.runAll();
    const busyShareAtEnd = await machineBusyShare();
    // With every server stopped: a start-up ratio is measured on a machine doing nothing else of ours.
    const startup = measureStartup(restCli, options.startupRounds);
    log(
      startup.ok
        ? `startup  rest --help ${startup.value.help.median.toFixed(2)}×, auth policy list ${startup.value.list.median.toFixed(2)}× node -e 0`
        : `startup  not measured: ${startup.reason}`,
    );
    // Each on databases and servers of its own, after the contenders have stopped.
    const policyTest = await policyTestLane(options, restCli);
    const pooler = await poolerLane(options, restCli);
    const hostile = await hostileLane(options, restCli);
    // The smoke run leaves it to the browser test, which runs the same measurement once.
    const consoleFirstScreen: Measured<FirstScreenReport> =
      options.mode === 'smoke'
        ? { ok: false, reason: 'not run in smoke mode (the browser test runs it once)' }
        : await ownLane(
            'console',
            () => measureConsoleFirstScreen({ restCli, runs: 5 }),
            (r) => [firstScreenText(r)],
          );
    const compiler = await compilerBench(options);

    const baseline = stateOf('baseline');
    const read = states.map((c) => scenarioRow(c, 'read', baseline));
    const write = states.filter((c) => c.spec.writes).map((c) => scenarioRow(c, 'write', undefined));
    const tripsByAction: ActionTrips[] = states
      .filter((c) => c.roundTrips.actions.length > 0)
      .map((c) => ({ contender: c.spec.id, label: c.spec.label, actions: c.roundTrips.actions }));
    const team: TeamReport | null =
      teamData === undefined
        ? null
        : {
            rows: teamData.shape.rows,
            teams: teamData.shape.teams,
            users: teamData.shape.users,
            memberships: teamData.memberships,
            policies: TEAM_POLICIES.map(({ table_name, action, expression }) => ({
              table_name,
              action,
              expression,
            })),
            read: TEAM_CONTENDERS.map((id) => teamRow(stateOf(id))),
          };
    const sessions: SessionReport | null = !options.sessions
      ? null
      : {
          users: sessionData?.users ?? 0,
          probes: SESSION_CONTENDERS.map((id) => ({ contender: id, outcome: stateOf(id).sessionProbe })),
          read: SESSION_CONTENDERS.map((id) => {
            const c = stateOf(id);
            return vsOwnerRow(c, c.sessionRounds, c.sessionFailure, c.roundTrips.session);
          }),
        };
    const columnRules: ColumnRuleReport | null = !options.columns
      ? null
      : {
          path: COLUMN_RULE_READ_PATH,
          policies: COLUMN_RULE_POLICIES.map(({ expression, columns }) => ({ expression, columns })),
          read: COLUMN_RULE_CONTENDERS.map((id) => {
            const c = stateOf(id);
            return vsOwnerRow(c, c.columnRounds, c.columnFailure, c.roundTrips.columns);
          }),
        };
    const notRunPgrst = 'the /rest/v1 lanes are off (--pgrst off)';
    const pgrst: PgrstReport | null = !options.pgrst
      ? null
      : {
          requests: {
            seedRead: `GET ${READ_PATH}`,
            read: `GET ${PGRST_READ_PATH}`,
            countedRead: `GET ${PGRST_READ_PATH} with Prefer: ${PGRST_COUNT_HEADERS['prefer'] ?? ''}`,
            seedCreate: 'POST /items',
            create: `POST ${pgrstPath('/items')} with Prefer: ${PGRST_RETURN_HEADERS['prefer'] ?? ''}`,
          },
          read: PGRST_CONTENDERS.map((id) => {
            const c = stateOf(id);
            return dialectRow(c, c.pgrstReadRounds, c.pgrstReadFailure, c.readRounds, c.roundTrips.pgrstRead);
          }),
          countedRead: PGRST_CONTENDERS.map((id) => {
            const c = stateOf(id);
            return dialectRow(
              c,
              c.pgrstCountRounds,
              c.pgrstCountFailure,
              c.readRounds,
              c.roundTrips.pgrstCount,
            );
          }),
          seedCreate: PGRST_CONTENDERS.map((id) => {
            const c = stateOf(id);
            const trips = c.roundTrips.actions.find((a) => a.action === 'create')?.trips ?? null;
            return {
              contender: c.spec.id,
              label: c.spec.label,
              outcome: outcomeOf(c.failure ?? c.seedCreateFailure, c.seedCreateRounds),
              rounds: c.seedCreateRounds,
              vsBaseline: null,
              roundTrips: trips,
            };
          }),
          create: PGRST_CONTENDERS.map((id) => {
            const c = stateOf(id);
            return dialectRow(
              c,
              c.pgrstCreateRounds,
              c.pgrstCreateFailure,
              c.seedCreateRounds,
              c.roundTrips.pgrstCreate,
            );
          }),
        };
    const contenders: ContenderReport[] = states.map((c) => ({
      id: c.spec.id,
      label: c.spec.label,
      description: c.spec.description,
      failure: c.failure ?? null,
      readProbe: c.readProbe,
      peakRssBytes: c.peakRss,
    }));
    const args = options.argv.map(withoutPassword).join(' ');
    const report: BenchReport = {
      version: 1,
      mode: options.mode,
      startedAt,
      finishedAt: new Date().toISOString(),
      command: `npm run bench${args === '' ? '' : ` -- ${args}`}`,
      machine: { ...machine, loadAverageAtEnd: loadavg()[0] ?? 0, busyShareAtStart, busyShareAtEnd },
      config: {
        rows: options.data.rows,
        users: options.data.users,
        connections: options.connections,
        rounds: options.rounds,
        writeRounds: options.writeRounds,
        roundSeconds: secondsOf(options.roundWindow),
        warmupSeconds: secondsOf(options.warmupWindow),
        loginSeconds: secondsOf(options.loginWindow),
        roundRequests: requestsOf(options.roundWindow),
        warmupRequests: requestsOf(options.warmupWindow),
        loginRequests: requestsOf(options.loginWindow),
        roundTripRequests: options.roundTripRequests,
      },
      database: { name: generated.pgDatabase, dropped },
      contenders,
      read,
      write,
      login,
      team,
      sessions,
      columnRules,
      pgrst,
      tripsByAction,
      targets: [
        ...evaluateTargets(read, contenders, login, team, undefined, sessions),
        ...columnRuleTargets(read, columnRules),
        ...pgrstTargets(read, pgrst, notRunPgrst),
        ...actionTripTargets(tripsByAction),
        ...startupTargets(startup),
        ...policyTestTargets(policyTest),
        consoleFirstScreenTarget(consoleFirstScreen),
        ...poolerTargets(pooler),
      ],
      compilerBench: compiler,
      startup,
      pooler,
      hostile,
      policyTest,
    };
    writeFileSync(paths.json, `${JSON.stringify(report, null, 2)}\n`);
    writeFileSync(
      paths.chart,
      renderChart(
        read,
        `${report.mode === 'smoke' ? 'smoke' : isFullProtocol(report.config) ? 'full' : 'shortened'} run of ${startedAt.slice(0, 10)}, ${options.rounds} ${options.rounds === 1 ? 'round' : 'rounds'} × ${windowText(options.roundWindow)}, ${options.connections} connections; whiskers: min–max over rounds`,
      ),
    );
    writeFileSync(paths.markdown, renderMarkdown(report, relative(dirname(paths.markdown), paths.chart)));

    log('');
    for (const t of report.targets) log(`${t.met ? 'met   ' : 'MISSED'}  ${t.target}: ${t.measured}`);
    log(`\nwrote ${paths.markdown}, ${paths.chart} and ${paths.json}`);
    return baseline.failure === undefined && baseline.readFailure === undefined ? 0 : 2;
  } finally {
    await cleanup.runAll();
  }
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    console.error(`bench failed: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  },
);
