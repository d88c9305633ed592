// Command-line options of `npm run bench`: the full profile, the few-second `--smoke` profile,
// and overrides of each knob.

import { parseArgs } from 'node:util';
import type { LoadWindow } from './driver-protocol.js';
import {
  FULL_DATA,
  FULL_TEAM,
  SMOKE_DATA,
  SMOKE_TEAM,
  type DataShape,
  type TeamShape,
} from './generate-data.js';

export interface BenchOptions {
  readonly mode: 'full' | 'smoke';
  readonly pgAdminUrl: string;
  readonly data: DataShape;
  /** The team membership read workload on the PostgreSQL paths; undefined = not run. */
  readonly team: TeamShape | undefined;
  /**
   * The session read: the owner read with built-in users' session tokens (`sid`),
   * timed beside the external-token read on every rest contender; false = not run.
   */
  readonly sessions: boolean;
  /**
   * The column-rule read (bench/column-rules.ts): the owner read on a table with a masked and a
   * hidden column, timed beside the plain owner read on every rest contender; false = not run.
   */
  readonly columns: boolean;
  /**
   * The `/rest/v1` lanes: the owner read (and with `Prefer: count=exact`) through the PostgREST
   * dialect beside the seed read, and its single-row POST beside the seed POST, on every rest
   * contender; false = not run.
   */
  readonly pgrst: boolean;
  /**
   * The pooler lane (bench/pooler.ts): both PostgreSQL paths through PgBouncer at `bouncerUrl`
   * against a direct connection; false = not run (`--pooler off`, the smoke default).
   */
  readonly pooler: boolean;
  readonly bouncerUrl: string;
  /** The hostile-load lane (bench/hostile.ts); false = not run (`--hostile off`, the smoke default). */
  readonly hostile: boolean;
  /** MariaDB for the hostile-load lane; undefined leaves it out (`--mysql-url off`). */
  readonly mysqlUrl: string | undefined;
  readonly connections: number;
  readonly rounds: number;
  readonly writeRounds: number;
  /** Each read and write round: `--duration` seconds, or `--requests` (the smoke default). */
  readonly roundWindow: LoadWindow;
  /** Each lane's warm-up: `--warmup` seconds, or `--warmup-requests`; by default like the rounds. */
  readonly warmupWindow: LoadWindow;
  /**
   * The login window: `--login-duration` seconds (the public read alone before it too), or
   * `--login-requests` logins (the smoke default; the public read alone then ends after
   * READ_ALONE_REQUESTS requests, and the read beside the logins when they are done).
   */
  readonly loginWindow: LoadWindow;
  readonly loginUsers: number;
  readonly loginConnections: number;
  readonly publicReadConnections: number;
  /** Requests counted by the round-trip proxy per contender and workload. */
  readonly roundTripRequests: number;
  readonly readyTimeoutMs: number;
  /** Where BENCHMARKS.md, chart.svg and results.json go; undefined = the repo's own files. */
  readonly outDir: string | undefined;
  readonly restCli: string | undefined;
  readonly runCompilerBench: boolean;
  /** Rounds of the CLI start-up measurement (bench/startup.ts): each spawns three processes. */
  readonly startupRounds: number;
  /**
   * Runs of `rest policy test` on a file of 200 cases per database (bench/policy-test-lane.ts);
   * 0 = not run (`--policy-test off`).
   */
  readonly policyTestRuns: number;
  /** The arguments as given, for the report's exact command. */
  readonly argv: readonly string[];
}

export const DEFAULT_PG_URL = 'postgres://postgres@127.0.0.1:5432/test';
export const DEFAULT_PGBOUNCER_URL = 'postgres://postgres@127.0.0.1:6432/test';
export const DEFAULT_MYSQL_URL = 'mysql://root@127.0.0.1:3306/test';

/** The full protocol: what a run must use to count as a full run. */
export const FULL_PROFILE = {
  rounds: 5,
  writeRounds: 3,
  roundSeconds: 10,
  warmupSeconds: 5,
  loginSeconds: 10,
} as const;

/** The smoke profile's windows: each ends after a number of requests, a fraction of a second. */
export const SMOKE_REQUESTS = { round: 200, login: 8 } as const;

/** The public read alone, before a login window that ends after a number of logins. */
export const READ_ALONE_REQUESTS = 200;

/**
 * True when a run used at least the full protocol's rows, rounds and seconds; a window that ended
 * after a number of requests (its seconds null) is not the protocol's.
 */
export function isFullProtocol(
  config: { readonly rows: number; readonly rounds: number; readonly writeRounds: number } & Readonly<
    Record<'roundSeconds' | 'warmupSeconds' | 'loginSeconds', number | null>
  >,
): boolean {
  return (
    config.rows >= FULL_DATA.rows &&
    (Object.keys(FULL_PROFILE) as (keyof typeof FULL_PROFILE)[]).every((k) => {
      const value = config[k];
      return value !== null && value >= FULL_PROFILE[k];
    })
  );
}

/** `10 s`, `200 requests`, `8 logins`: what one window was, for the report and the log. */
export function windowText(window: LoadWindow, unit: 'request' | 'login' = 'request'): string {
  if (window.kind === 'seconds') return `${window.seconds} s`;
  return `${window.requests.toLocaleString('en-US')} ${unit}${window.requests === 1 ? '' : 's'}`;
}

const USAGE = `usage: npm run bench -- [--smoke] [--pg-url <url>] [--rounds <n>] [--write-rounds <n>]
       [--duration <s> | --requests <n>]   (each read and write round ends after s seconds (full default 10)
                                            or after n requests (smoke default ${SMOKE_REQUESTS.round}))
       [--warmup <s> | --warmup-requests <n>]   (each warm-up; default 5 s, 0.5 s with --smoke, or a quarter of --requests)
       [--login-duration <s> | --login-requests <n>]   (the login window: s seconds (full default 10)
                                            or n logins (smoke default ${SMOKE_REQUESTS.login}))
       [--connections <n>] [--out <dir>] [--rest-cli <path>]
       [--team on|off]   (the team membership read workload; default on, off with --smoke)
       [--sessions on|off]   (the read with session tokens; default on, off with --smoke)
       [--columns on|off]   (the owner read on a table with a masked and a hidden column; default on)
       [--pgrst on|off]   (the /rest/v1 read, counted read and POST beside the seed dialect's; default on)
       [--pooler on|off] [--pgbouncer-url <url>]   (both PostgreSQL paths through PgBouncer; default on, off with --smoke)
       [--hostile on|off] [--mysql-url <url>|off]   (failing, abandoned and crowding requests; default on, off with --smoke)
       [--policy-test on|off]   (rest policy test on a file of 200 cases; default on (5 runs), off with --smoke (1 run if on))`;

function positive(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0)
    throw new Error(`--${name} must be a positive number, got ${JSON.stringify(value)}\n${USAGE}`);
  return n;
}

/** A window given in seconds or in requests (not both), else `fallback`. */
function windowOf(
  seconds: { readonly name: string; readonly value: string | undefined },
  requests: { readonly name: string; readonly value: string | undefined; readonly atLeast: number },
  fallback: LoadWindow,
): LoadWindow {
  if (seconds.value !== undefined && requests.value !== undefined)
    throw new Error(
      `--${seconds.name} and --${requests.name} are two ends of one window: give one\n${USAGE}`,
    );
  if (seconds.value !== undefined)
    return { kind: 'seconds', seconds: positive(seconds.name, seconds.value, 0) };
  if (requests.value === undefined) return fallback;
  const n = positive(requests.name, requests.value, 0);
  // autocannon spreads the requests over the connections and refuses a connection without one.
  if (!Number.isInteger(n) || n < requests.atLeast)
    throw new Error(
      `--${requests.name} must be a whole number of at least ${requests.atLeast} (one per connection), got ${JSON.stringify(requests.value)}\n${USAGE}`,
    );
  return { kind: 'requests', requests: n };
}

export function parseBenchOptions(argv: readonly string[], env: NodeJS.ProcessEnv): BenchOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      smoke: { type: 'boolean', default: false },
      'pg-url': { type: 'string' },
      rounds: { type: 'string' },
      'write-rounds': { type: 'string' },
      duration: { type: 'string' },
      requests: { type: 'string' },
      warmup: { type: 'string' },
      'warmup-requests': { type: 'string' },
      'login-duration': { type: 'string' },
      'login-requests': { type: 'string' },
      connections: { type: 'string' },
      out: { type: 'string' },
      'rest-cli': { type: 'string' },
      team: { type: 'string' },
      sessions: { type: 'string' },
      columns: { type: 'string' },
      pgrst: { type: 'string' },
      pooler: { type: 'string' },
      'pgbouncer-url': { type: 'string' },
      hostile: { type: 'string' },
      'mysql-url': { type: 'string' },
      'policy-test': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) throw new Error(USAGE);
  const smoke = values.smoke;
  const team = values.team ?? (smoke ? 'off' : 'on');
  if (team !== 'on' && team !== 'off')
    throw new Error(`--team must be on or off, got ${JSON.stringify(team)}\n${USAGE}`);
  const sessions = values.sessions ?? (smoke ? 'off' : 'on');
  if (sessions !== 'on' && sessions !== 'off')
    throw new Error(`--sessions must be on or off, got ${JSON.stringify(sessions)}\n${USAGE}`);
  const columns = values.columns ?? 'on';
  if (columns !== 'on' && columns !== 'off')
    throw new Error(`--columns must be on or off, got ${JSON.stringify(columns)}\n${USAGE}`);
  const pgrst = values.pgrst ?? 'on';
  if (pgrst !== 'on' && pgrst !== 'off')
    throw new Error(`--pgrst must be on or off, got ${JSON.stringify(pgrst)}\n${USAGE}`);
  const onOff = (name: string, value: string | undefined): boolean => {
    const v = value ?? (smoke ? 'off' : 'on');
    if (v !== 'on' && v !== 'off')
      throw new Error(`--${name} must be on or off, got ${JSON.stringify(v)}\n${USAGE}`);
    return v === 'on';
  };
  const policyTest = values['policy-test'] ?? (smoke ? 'off' : 'on');
  if (policyTest !== 'on' && policyTest !== 'off')
    throw new Error(`--policy-test must be on or off, got ${JSON.stringify(policyTest)}\n${USAGE}`);
  const mysqlUrl = values['mysql-url'] ?? env['REST_TEST_MYSQL_URL'] ?? DEFAULT_MYSQL_URL;
  const connections = Math.round(positive('connections', values.connections, 32));
  const loginConnections = 8;
  const roundWindow = windowOf(
    { name: 'duration', value: values.duration },
    { name: 'requests', value: values.requests, atLeast: connections },
    smoke
      ? { kind: 'requests', requests: Math.max(SMOKE_REQUESTS.round, connections) }
      : { kind: 'seconds', seconds: FULL_PROFILE.roundSeconds },
  );
  const warmupWindow = windowOf(
    { name: 'warmup', value: values.warmup },
    { name: 'warmup-requests', value: values['warmup-requests'], atLeast: connections },
    roundWindow.kind === 'requests'
      ? { kind: 'requests', requests: Math.max(connections, Math.ceil(roundWindow.requests / 4)) }
      : { kind: 'seconds', seconds: smoke ? 0.5 : FULL_PROFILE.warmupSeconds },
  );
  const loginWindow = windowOf(
    { name: 'login-duration', value: values['login-duration'] },
    { name: 'login-requests', value: values['login-requests'], atLeast: loginConnections },
    smoke
      ? { kind: 'requests', requests: SMOKE_REQUESTS.login }
      : { kind: 'seconds', seconds: FULL_PROFILE.loginSeconds },
  );
  return {
    mode: smoke ? 'smoke' : 'full',
    pgAdminUrl: values['pg-url'] ?? env['REST_TEST_PG_URL'] ?? DEFAULT_PG_URL,
    data: smoke ? SMOKE_DATA : FULL_DATA,
    team: team === 'off' ? undefined : smoke ? SMOKE_TEAM : FULL_TEAM,
    sessions: sessions === 'on',
    columns: columns === 'on',
    pgrst: pgrst === 'on',
    pooler: onOff('pooler', values.pooler),
    bouncerUrl: values['pgbouncer-url'] ?? env['REST_TEST_PGBOUNCER_URL'] ?? DEFAULT_PGBOUNCER_URL,
    hostile: onOff('hostile', values.hostile),
    mysqlUrl: mysqlUrl === 'off' ? undefined : mysqlUrl,
    connections,
    rounds: Math.round(positive('rounds', values.rounds, smoke ? 1 : FULL_PROFILE.rounds)),
    writeRounds: Math.round(
      positive('write-rounds', values['write-rounds'], smoke ? 1 : FULL_PROFILE.writeRounds),
    ),
    roundWindow,
    warmupWindow,
    loginWindow,
    loginUsers: smoke ? 4 : 32,
    loginConnections,
    publicReadConnections: 4,
    roundTripRequests: smoke ? 40 : 400,
    readyTimeoutMs: 30_000,
    outDir: values.out,
    restCli: values['rest-cli'],
    runCompilerBench: !smoke,
    startupRounds: smoke ? 1 : 15,
    policyTestRuns: policyTest === 'off' ? 0 : smoke ? 1 : 5,
    argv,
  };
}
