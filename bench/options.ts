// Command-line options of `npm run bench`: the full profile, the few-second `--smoke` profile,
// and overrides of each knob.

import { parseArgs } from 'node:util';
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
  /** The team membership read workload (issue 15) on the PostgreSQL paths; undefined = not run. */
  readonly team: TeamShape | undefined;
  /**
   * The session read (issue 14): the owner read with built-in users' session tokens (`sid`),
   * timed beside the external-token read on every rest contender; false = not run.
   */
  readonly sessions: boolean;
  readonly connections: number;
  readonly rounds: number;
  readonly writeRounds: number;
  readonly roundSeconds: number;
  readonly warmupSeconds: number;
  readonly loginSeconds: number;
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
  /** The arguments as given, for the report's exact command. */
  readonly argv: readonly string[];
}

export const DEFAULT_PG_URL = 'postgres://postgres@127.0.0.1:5432/test';

/** The protocol: what a run must use to count as a full run. */
export const FULL_PROFILE = {
  rounds: 5,
  writeRounds: 3,
  roundSeconds: 10,
  warmupSeconds: 5,
  loginSeconds: 10,
} as const;

/** True when a run used at least the full protocol's rows, rounds and seconds. */
export function isFullProtocol(
  config: { readonly rows: number } & Readonly<Record<keyof typeof FULL_PROFILE, number>>,
): boolean {
  return (
    config.rows >= FULL_DATA.rows &&
    (Object.keys(FULL_PROFILE) as (keyof typeof FULL_PROFILE)[]).every((k) => config[k] >= FULL_PROFILE[k])
  );
}

const USAGE = `usage: npm run bench -- [--smoke] [--pg-url <url>] [--rounds <n>] [--write-rounds <n>]
       [--duration <s>] [--warmup <s>] [--login-duration <s>] [--connections <n>] [--out <dir>] [--rest-cli <path>]
       [--team on|off]   (the team membership read workload; default on, off with --smoke)
       [--sessions on|off]   (the read with session tokens; default on, off with --smoke)`;

function positive(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0)
    throw new Error(`--${name} must be a positive number, got ${JSON.stringify(value)}\n${USAGE}`);
  return n;
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
      warmup: { type: 'string' },
      'login-duration': { type: 'string' },
      connections: { type: 'string' },
      out: { type: 'string' },
      'rest-cli': { type: 'string' },
      team: { type: 'string' },
      sessions: { type: 'string' },
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
  return {
    mode: smoke ? 'smoke' : 'full',
    pgAdminUrl: values['pg-url'] ?? env['REST_TEST_PG_URL'] ?? DEFAULT_PG_URL,
    data: smoke ? SMOKE_DATA : FULL_DATA,
    team: team === 'off' ? undefined : smoke ? SMOKE_TEAM : FULL_TEAM,
    sessions: sessions === 'on',
    connections: Math.round(positive('connections', values.connections, 32)),
    rounds: Math.round(positive('rounds', values.rounds, smoke ? 1 : FULL_PROFILE.rounds)),
    writeRounds: Math.round(
      positive('write-rounds', values['write-rounds'], smoke ? 1 : FULL_PROFILE.writeRounds),
    ),
    roundSeconds: positive('duration', values.duration, smoke ? 1 : FULL_PROFILE.roundSeconds),
    warmupSeconds: positive('warmup', values.warmup, smoke ? 0.5 : FULL_PROFILE.warmupSeconds),
    loginSeconds: positive('login-duration', values['login-duration'], smoke ? 2 : FULL_PROFILE.loginSeconds),
    loginUsers: smoke ? 4 : 32,
    loginConnections: 8,
    publicReadConnections: 4,
    roundTripRequests: smoke ? 40 : 400,
    readyTimeoutMs: 30_000,
    outDir: values.out,
    restCli: values['rest-cli'],
    runCompilerBench: !smoke,
    startupRounds: smoke ? 3 : 15,
    argv,
  };
}
