// How fast the CLI starts (docs/cli.md): `rest --help` and `rest auth policy list` on a
// SQLite file, each against a bare `node -e 0` spawned in the same round — a ratio, so that the
// machine's speed cancels out. The three are spawned one after another in every round, in an
// order that rotates from round to round; the ratio is taken round by round.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spread, type Measured, type Spread } from './report-model.js';

export const STARTUP_COMMANDS = ['bare', 'help', 'list'] as const;
export type StartupCommand = (typeof STARTUP_COMMANDS)[number];

/** docs/operations.md: `rest --help` within 3× `node -e 0`, `auth policy list` on SQLite within 6×. */
export const STARTUP_LIMITS: Readonly<Record<Exclude<StartupCommand, 'bare'>, number>> = { help: 3, list: 6 };

/** Wall-clock milliseconds of each command in one round. */
export type StartupRound = Readonly<Record<StartupCommand, number>>;

export interface StartupReport {
  readonly rounds: number;
  /** Milliseconds per command (median, min–max over rounds). */
  readonly ms: Readonly<Record<StartupCommand, Spread>>;
  /** `rest --help` ÷ `node -e 0`, round by round. */
  readonly help: Spread;
  /** `rest auth policy list` ÷ `node -e 0`, round by round. */
  readonly list: Spread;
}

/** The node arguments of each command. */
export function startupArgs(
  restCli: string,
  dbUrl: string,
): Readonly<Record<StartupCommand, readonly string[]>> {
  return {
    bare: ['-e', '0'],
    help: [restCli, '--help'],
    list: [restCli, '-db.url', dbUrl, 'auth', 'policy', 'list'],
  };
}

/** Round r starts with the r-th command (mod 3): no command always runs first or after the same one. */
export function startupOrder(round: number): readonly StartupCommand[] {
  const n = STARTUP_COMMANDS.length;
  const first = ((round % n) + n) % n;
  return [...STARTUP_COMMANDS.slice(first), ...STARTUP_COMMANDS.slice(0, first)];
}

export function summarizeStartup(rounds: readonly StartupRound[]): StartupReport {
  const of = (c: StartupCommand): Spread => spread(rounds.map((r) => r[c]));
  const ratio = (c: StartupCommand): Spread => spread(rounds.map((r) => r[c] / r.bare));
  return {
    rounds: rounds.length,
    ms: { bare: of('bare'), help: of('help'), list: of('list') },
    help: ratio('help'),
    list: ratio('list'),
  };
}

/** One spawn, timed; a non-zero exit fails the measurement with what the command said. */
function timeSpawn(args: readonly string[]): number {
  const started = process.hrtime.bigint();
  const result = spawnSync(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== 0) {
    const said = `${result.stderr?.toString() ?? ''}`.trim().split('\n').at(-1) ?? '';
    throw new Error(`node ${args.join(' ')} exited ${result.status ?? result.signal}: ${said}`);
  }
  return ms;
}

/**
 * Sets up auth on a fresh SQLite file (three policies to list), spawns each command once to warm
 * the file cache, then `rounds` timed rounds. Run it while nothing else of the bench runs.
 */
export function measureStartup(restCli: string, rounds: number): Measured<StartupReport> {
  if (!existsSync(restCli)) return { ok: false, reason: `${restCli} does not exist (run npm run build)` };
  const dir = mkdtempSync(join(tmpdir(), 'rest-bench-startup-'));
  try {
    const dbUrl = `sqlite://${join(dir, 'startup.db')}`;
    timeSpawn([restCli, '-db.url', dbUrl, 'auth', 'setup']);
    const args = startupArgs(restCli, dbUrl);
    for (const c of STARTUP_COMMANDS) timeSpawn(args[c]);
    const samples: StartupRound[] = [];
    for (let round = 0; round < rounds; round++) {
      const sample: Partial<Record<StartupCommand, number>> = {};
      for (const c of startupOrder(round)) sample[c] = timeSpawn(args[c]);
      samples.push(sample as StartupRound);
    }
    return { ok: true, value: summarizeStartup(samples) };
  } catch (e) {
    return { ok: false, reason: e instanceof Error ? e.message : String(e) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
