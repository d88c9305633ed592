// Starting and stopping one contender server as a child process: free port, readiness by
// `GET /`, the tail of its output kept for failure reasons, SIGTERM then SIGKILL to stop it.

import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { send } from './workloads.js';

export interface ServerProcess {
  readonly pid: number;
  readonly baseUrl: string;
  /** The last lines the server wrote (stdout and stderr), for failure reasons. */
  outputTail(lines?: number): string;
  isRunning(): boolean;
  stop(): Promise<void>;
}

export interface ServerCommand {
  readonly label: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly port: number;
}

/** Bounded memory for a chatty server (request logs): keeps roughly the last `limit` bytes. */
class OutputTail {
  readonly #chunks: Buffer[] = [];
  #bytes = 0;
  readonly #limit: number;

  constructor(limit: number) {
    this.#limit = limit;
  }

  push(chunk: Buffer): void {
    this.#chunks.push(chunk);
    this.#bytes += chunk.length;
    while (this.#bytes > this.#limit && this.#chunks.length > 1)
      this.#bytes -= this.#chunks.shift()?.length ?? 0;
  }

  lines(count: number): string {
    const text = Buffer.concat(this.#chunks).toString('utf8');
    return text
      .split('\n')
      .filter((l) => l.trim() !== '')
      .slice(-count)
      .join('\n');
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function startServer(command: ServerCommand, readyTimeoutMs: number): Promise<ServerProcess> {
  const tail = new OutputTail(64 * 1024);
  const child: ChildProcess = spawn(process.execPath, [...command.args], {
    env: { ...process.env, ...command.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (chunk: Buffer) => tail.push(chunk));
  child.stderr?.on('data', (chunk: Buffer) => tail.push(chunk));
  let exitCode: number | null | undefined;
  let spawnError: Error | undefined;
  child.once('error', (e) => (spawnError = e));
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code) => {
      exitCode = code ?? -1;
      resolve();
    }),
  );
  const baseUrl = `http://127.0.0.1:${command.port}`;
  const server: ServerProcess = {
    pid: child.pid ?? -1,
    baseUrl,
    outputTail: (lines = 8) => tail.lines(lines),
    isRunning: () => exitCode === undefined && spawnError === undefined,
    stop: async () => {
      if (exitCode !== undefined || child.pid === undefined) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };

  const deadline = Date.now() + readyTimeoutMs;
  let lastAnswer = 'no answer';
  while (Date.now() < deadline) {
    if (spawnError !== undefined)
      throw new Error(`${command.label} could not be started: ${spawnError.message}`);
    if (exitCode !== undefined) {
      throw new Error(
        `${command.label} exited with code ${String(exitCode)} on start: ${oneLine(tail.lines(6))}`,
      );
    }
    try {
      // A connection of its own, closed after the answer: no idle connection delays a stop.
      const { status } = await send(baseUrl, { method: 'GET', path: '/', headers: {} }, undefined, 1_000);
      if (status === 200) return server;
      lastAnswer = `GET / answered ${status}`;
    } catch {
      lastAnswer = 'not listening';
    }
    await sleep(100);
  }
  await server.stop();
  throw new Error(
    `${command.label} was not ready within ${readyTimeoutMs} ms (${lastAnswer}): ${oneLine(tail.lines(6))}`,
  );
}

/** Server output as one report-friendly line. */
export function oneLine(text: string, max = 400): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat === '') return '(no output)';
  return flat.length > max ? `${flat.slice(0, max)}…` : flat;
}
