// Runs the `rest` command line and captures what it says: `runCli` calls cli/main.ts's `main`
// in this process (the real commands on the real databases, with their output and environment
// injected, passwords hashed at bcrypt cost 4 as by in-process test servers), `runCliProcess`
// spawns the built binary (dist/cli/main.js: `npm run build` first) for what only a real process
// shows, the cost rest stores included. Either way the environment is cleared of REST_* so each
// test sets its own.

import { spawn } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { main } from '../../../cli/main.js';
import { TEST_HASHER } from '../../support/server.js';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
export const CLI_ENTRY = join(REPO_ROOT, 'dist/cli/main.js');

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * In-process there is no working directory of its own: a relative SQLite path or config file
 * would resolve against the test's, so tests give absolute paths (or use runCliProcess with cwd).
 */
export interface RunOptions {
  readonly env?: Readonly<Record<string, string>>;
}

export interface ProcessRunOptions extends RunOptions {
  readonly cwd?: string;
  readonly timeoutMs?: number;
}

/** The environment of the test process without any REST_* variable (REST_TEST_* excepted). */
function cleanEnv(extra: Readonly<Record<string, string>>): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('REST_') || key.startsWith('REST_TEST_')) env[key] = value;
  }
  return { ...env, ...extra };
}

/** `rest …args` in this process; standard input is not a terminal (as runCliProcess's). */
export async function runCli(args: readonly string[], options: RunOptions = {}): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await main(args, {
    stdout: { write: (text) => void (stdout += text) },
    stderr: { write: (text) => void (stderr += text) },
    env: cleanEnv(options.env ?? {}),
    hasher: TEST_HASHER,
    terminal: {
      input: Readable.from([]),
      output: new Writable({
        write(chunk: Buffer | string, _encoding, callback) {
          stderr += chunk.toString();
          callback();
        },
      }),
    },
  });
  return { code, stdout, stderr };
}

/** `node dist/cli/main.js …args` in a child process. */
export function runCliProcess(args: readonly string[], options: ProcessRunOptions = {}): Promise<CliResult> {
  if (!existsSync(CLI_ENTRY)) throw new Error(`${CLI_ENTRY} is missing: run npm run build first`);
  return capture(process.execPath, [CLI_ENTRY, ...args], options);
}

/** `npm start --silent -- …args` from the repository root (npm's own lines left out). */
export function runNpmStart(args: readonly string[], options: ProcessRunOptions = {}): Promise<CliResult> {
  if (!existsSync(CLI_ENTRY)) throw new Error(`${CLI_ENTRY} is missing: run npm run build first`);
  return capture('npm', ['start', '--silent', '--', ...args], options);
}

function capture(command: string, args: readonly string[], options: ProcessRunOptions): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd ?? REPO_ROOT,
      env: cleanEnv(options.env ?? {}),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
  });
}
