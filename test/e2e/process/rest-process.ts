// Spawns the built `rest` binary (dist/cli/main.js — run `npm run build` first) and follows its
// stdout line by line; the environment is cleared of REST_* settings so each test sets its own.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
export const REST_BIN = resolve(REPO_ROOT, 'dist/cli/main.js');

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Milliseconds from the call of `stop` (or from spawn) to the exit. */
  readonly ms: number;
}

export interface RestProcess {
  readonly child: ChildProcess;
  readonly stdoutLines: () => readonly string[];
  /** Resolves with the first stdout line that satisfies `match`; rejects on exit or timeout. */
  waitForLine(match: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  /** Resolves with the parsed startup line's URL. */
  started(timeoutMs?: number): Promise<string>;
  readonly exited: Promise<Exit>;
  /** Sends `signal` and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<Exit>;
}

/**
 * The shutdown grace of a spawned server unless a test asks for the default (`grace: 'default'`)
 * or sets REST_SHUTDOWN_GRACE_MS itself: a stop with an idle kept-alive client (fetch keeps one)
 * waits min(grace, 1 s) for it, so tests that do not test the grace stop in a fraction of that.
 */
export const TEST_SHUTDOWN_GRACE_MS = 300;

export interface SpawnOptions {
  readonly env?: Record<string, string>;
  readonly cwd?: string;
  /** 'default': the server's own grace (SHUTDOWN_GRACE_MS), for the tests of in-flight requests. */
  readonly grace?: 'default';
}

function cleanEnv(extra: Readonly<Record<string, string>>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('REST_') || key.startsWith('REST_TEST_')) env[key] = value;
  }
  return { ...env, ...extra };
}

export function spawnRest(args: readonly string[], options: SpawnOptions = {}): RestProcess {
  if (!existsSync(REST_BIN)) throw new Error(`${REST_BIN} is missing: run npm run build first`);
  const grace = options.grace === 'default' ? {} : { REST_SHUTDOWN_GRACE_MS: String(TEST_SHUTDOWN_GRACE_MS) };
  const child = spawn(process.execPath, [REST_BIN, ...args], {
    cwd: options.cwd ?? REPO_ROOT,
    env: cleanEnv({ ...grace, ...options.env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let stopAt = performance.now();
  const waiters = new Set<() => void>();
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
    waiters.forEach((w) => w());
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<Exit>((resolve) => {
    child.on('close', (code, signal) => {
      waiters.forEach((w) => w());
      resolve({ code, signal, stdout, stderr, ms: performance.now() - stopAt });
    });
  });
  const lines = (): string[] => stdout.split('\n').filter((l) => l !== '');
  let done = false;
  void exited.then(() => (done = true));

  const waitForLine = (match: (line: string) => boolean, timeoutMs = 15_000): Promise<string> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        const found = lines().find(match);
        if (found !== undefined) finish(() => resolve(found));
        else if (done)
          finish(() => reject(new Error(`rest exited before the expected line; stderr: ${stderr}`)));
      };
      const timer = setTimeout(
        () =>
          finish(() =>
            reject(new Error(`no such line within ${timeoutMs} ms; stdout: ${stdout}; stderr: ${stderr}`)),
          ),
        timeoutMs,
      );
      const finish = (then: () => void): void => {
        clearTimeout(timer);
        waiters.delete(check);
        then();
      };
      waiters.add(check);
      check();
    });

  return {
    child,
    stdoutLines: lines,
    waitForLine,
    started: async (timeoutMs) => {
      const line = await waitForLine((l) => l.includes('"listening on '), timeoutMs);
      return (JSON.parse(line) as { url: string }).url;
    },
    exited,
    stop: (signal = 'SIGTERM') => {
      stopAt = performance.now();
      child.kill(signal);
      return exited;
    },
  };
}

/** Runs the binary to completion (for commands that are expected to exit by themselves). */
export async function runRest(args: readonly string[], options: SpawnOptions = {}): Promise<Exit> {
  const p = spawnRest(args, options);
  const timer = setTimeout(() => p.child.kill('SIGKILL'), 20_000);
  const exit = await p.exited;
  clearTimeout(timer);
  return exit;
}
