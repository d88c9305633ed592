// `rest [flags]` / `rest serve [flags]` (cli/commands/serve.ts), run: the HTTP server until SIGTERM
// or SIGINT, then a graceful shutdown (every accepted request is answered, the pool closes), exit 0.

import { setFlagsFromString } from 'node:v8';
import { quoteValue } from '../../errors/quote-value.js';
import { RestError } from '../../errors/rest-error.js';
import { createLogger, LOG_LEVELS, type LogLevel } from '../../runtime/logger.js';
import type { GlobalArgs } from '../config/global-options.js';
import type { Env } from '../config/load-config.js';
import { isPrimaryOf, nextStop, runPrimary } from '../../runtime/server/cluster.js';
import { processIo, type CommandContext } from '../context.js';
import { configOf } from './database.js';

const isLogLevel = (s: string): s is LogLevel => (LOG_LEVELS as readonly string[]).includes(s);

function logLevelFromEnv(env: Env): LogLevel {
  const level = env['REST_LOG_LEVEL'];
  if (level === undefined || level === '') return 'info';
  if (!isLogLevel(level))
    throw new RestError(
      'invalid_config',
      `REST_LOG_LEVEL ${quoteValue(level)} is not one of ${LOG_LEVELS.join(', ')}`,
    );
  return level;
}

/** Hidden: tests shorten the shutdown grace (default SHUTDOWN_GRACE_MS) instead of waiting 8 s. */
function shutdownGraceFromEnv(env: Env): { shutdownGraceMs?: number } {
  const text = env['REST_SHUTDOWN_GRACE_MS'];
  if (text === undefined || text === '') return {};
  const ms = Number(text);
  if (!Number.isSafeInteger(ms) || ms < 1)
    throw new RestError(
      'invalid_config',
      `REST_SHUTDOWN_GRACE_MS ${quoteValue(text)} is not a whole number of milliseconds`,
    );
  return { shutdownGraceMs: ms };
}

/** A worker could not start: it printed why; the primary exits with the same code. */
const workerFailed = (code: number): RestError =>
  new RestError('worker_failed', `a worker process could not start (exit code ${code}); its error is above`, {
    category: code === 1 ? 'usage' : code === 2 ? 'invalid_input' : 'unavailable',
  });

const HEAP_GROWING = '--heap-growing-percent';

/**
 * A server's live heap is small (about 25 MB) while it makes garbage fast; V8's default lets the
 * old generation grow up to 4× the live size between full collections. Twice the live size keeps
 * the peak resident size about 50 MB lower under load at no measured cost in throughput
 * (BENCHMARKS.md). A value given on node's command line is left alone.
 */
function boundHeapGrowth(): void {
  if (!process.execArgv.some((a) => a.startsWith(HEAP_GROWING) || a.startsWith('--heap_growing_percent'))) {
    setFlagsFromString(`${HEAP_GROWING}=100`);
  }
}

export async function serve(ctx: CommandContext, args: GlobalArgs): Promise<void> {
  boundHeapGrowth();
  const config = configOf(ctx, args);
  // The real process logs through pino's own synchronous writer on fd 1; any other io gets the lines.
  const destination = ctx.io === processIo ? {} : { destination: { write: ctx.io.stdout } };
  const logger = createLogger({ level: logLevelFromEnv(ctx.env), ...destination });
  const grace = shutdownGraceFromEnv(ctx.env);
  const stopped = nextStop();
  if (isPrimaryOf(config.workers)) {
    const code = await runPrimary({ workers: config.workers ?? 1, logger, stopped });
    if (code !== 0) throw workerFailed(code);
    logger.info('stopped');
    return;
  }
  // Loaded here so that the other commands and --help never load express and the request path.
  const { startServer } = await import('../../runtime/server/server.js');
  const server = await startServer(config, {
    logger,
    ...grace,
    // The console runs policy test files as `rest policy test` does, loaded when first asked.
    policyTests: async (source, name, options) =>
      (await import('../../runtime/policy-test/run-file.js')).runPolicyTestFile(source, name, options),
  });
  const signal = await stopped;
  logger.info({ signal }, `${signal}: finishing in-flight requests and shutting down`);
  await server.close();
  logger.info('stopped');
}

/** `rest serve` (cli/commands/serve.ts). */
export const run = serve;
