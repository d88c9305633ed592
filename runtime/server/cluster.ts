// `-workers N`: the primary process forks N workers (node:cluster) that each run the whole server
// — own database pool, caches and listeners — on the listen address they share; the primary only
// hands out connections (round-robin on Linux), replaces a worker that dies, and on SIGTERM or
// SIGINT asks every worker to drain (runtime/http/draining-server.ts) and exits when all have.
// What workers share goes through the database, as between any rest processes on one database.

import cluster, { type Worker } from 'node:cluster';
import type { Logger } from '../logger.js';

/** Longest wait before a dead worker is replaced; the wait doubles from 250 ms while workers keep dying. */
/** The exit code of a primary whose workers all stopped as asked. */
const EXIT_SUCCESS = 0;
const MAX_RESTART_DELAY_MS = 30_000;

export interface PrimaryOptions {
  readonly workers: number;
  readonly logger: Logger;
  /** Resolves with the signal that asks the whole server to stop. */
  readonly stopped: Promise<NodeJS.Signals>;
}

/**
 * Runs the primary until the workers have stopped; resolves with the process's exit code: 0 after
 * a stop, or the exit code of a worker that failed to start (its own error line says why).
 */
export async function runPrimary(options: PrimaryOptions): Promise<number> {
  const { logger } = options;
  let stopping = false;
  let restartDelay = 250;
  const live = new Set<Worker>();

  const fork = (): Worker => {
    // A replacement's listen(0) joins the others' port: the primary keys shared handles by the
    // listen arguments, not by the port the first listen got.
    const worker = cluster.fork();
    live.add(worker);
    worker.on('exit', () => live.delete(worker));
    return worker;
  };

  // Start-up: every worker listens, or the first to fail ends the whole server with its code.
  const started = await new Promise<{ readonly ok: true } | { readonly ok: false; readonly code: number }>(
    (resolve) => {
      let listening = 0;
      for (let i = 0; i < options.workers; i++) {
        const worker = fork();
        worker.once('listening', () => {
          listening += 1;
          if (listening === options.workers) resolve({ ok: true });
        });
        worker.once('exit', (code) => resolve({ ok: false, code: code === 0 || code === null ? 1 : code }));
      }
      void options.stopped.then(() => resolve({ ok: false, code: 0 }));
    },
  );
  if (!started.ok) {
    stopping = true;
    await stopAll(live);
    return started.code;
  }
  logger.info({ workers: options.workers }, `${options.workers} workers are serving`);

  // A worker that dies while serving is replaced; its in-flight requests are lost (it crashed).
  const replace = (worker: Worker, code: number | null, signal: string | null): void => {
    if (stopping) return;
    logger.error(
      { worker: worker.process.pid, code, signal, restartInMs: restartDelay },
      'a worker died; starting another',
    );
    const delay = restartDelay;
    restartDelay = Math.min(restartDelay * 2, MAX_RESTART_DELAY_MS);
    setTimeout(() => {
      if (stopping) return;
      const next = fork();
      next.once('listening', () => (restartDelay = 250));
    }, delay).unref();
  };
  cluster.on('exit', replace);

  const signal = await options.stopped;
  stopping = true;
  cluster.off('exit', replace);
  logger.info({ signal, workers: live.size }, `${signal}: asking every worker to finish its requests`);
  await stopAll(live);
  return EXIT_SUCCESS;
}

/**
 * Sends each worker SIGTERM (it drains; one still starting, before its handler is in place, just
 * ends) and waits until every one has exited.
 */
async function stopAll(workers: ReadonlySet<Worker>): Promise<void> {
  await Promise.all(
    [...workers].map(
      (worker) =>
        new Promise<void>((resolve) => {
          if (worker.isDead()) {
            resolve();
            return;
          }
          worker.once('exit', () => resolve());
          worker.process.kill('SIGTERM');
        }),
    ),
  );
}

/**
 * What stops this process's server: SIGTERM or SIGINT; in a worker also the primary's death. A
 * worker keeps ignoring further signals while it drains (a terminal's Ctrl-C reaches the primary
 * and every worker at once, and then the primary sends SIGTERM).
 */
export function nextStop(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const worker = cluster.isWorker;
    const stop = (signal: NodeJS.Signals): void => {
      if (!worker) {
        process.off('SIGTERM', stop);
        process.off('SIGINT', stop);
      }
      resolve(signal);
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
    if (worker) process.on('disconnect', () => stop('SIGTERM'));
  });
}

export const isPrimaryOf = (workers: number | undefined): boolean => (workers ?? 1) > 1 && cluster.isPrimary;
