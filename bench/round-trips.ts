// Round trips to PostgreSQL per request, outside the timed runs: a second instance of the
// contender connects through the counting proxy, warms its pool, then serves N requests.

import { Agent } from 'node:http';
import type { LoadRequest } from './driver-protocol.js';
import { startPgCountingProxy, type PgTrafficCounts } from './pg-proxy.js';
import type { Measured, RoundTrips } from './report-model.js';
import { freePort, oneLine, startServer, type ServerCommand } from './server-process.js';
import { send } from './workloads.js';

const CONCURRENCY = 4;

/** Sends `count` requests from `requests` (in turn) with a few in flight; any non-2xx is an error. */
async function sendAll(
  agent: Agent,
  baseUrl: string,
  requests: readonly LoadRequest[],
  offset: number,
  count: number,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const i = next++;
      const request = requests[(offset + i) % requests.length];
      if (request === undefined) return;
      const { status } = await send(baseUrl, request, agent);
      if (status < 200 || status > 299) {
        throw new Error(`${request.method} ${request.path.split('?')[0] ?? ''} answered ${status}`);
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

const perRequest = (before: PgTrafficCounts, after: PgTrafficCounts, requests: number): RoundTrips => ({
  requests,
  flightsPerRequest: (after.flights - before.flights) / requests,
  messagesPerRequest: (after.messages - before.messages) / requests,
  syncsPerRequest: (after.syncs - before.syncs) / requests,
  queriesPerRequest: (after.queries - before.queries) / requests,
  statementsPerRequest: (after.queries + after.executes - before.queries - before.executes) / requests,
  newConnections: after.connections - before.connections,
});

export interface RoundTripWorkload {
  readonly name: string;
  readonly requests: readonly LoadRequest[];
  /**
   * Requests sent before counting (default: a quarter of the count, at least 20). When set, that
   * warm-up is counted too and reported as `firstPass` — e.g. one request per user, each user's first.
   */
  readonly warmup?: number;
}

/** One instance per contender; each workload is warmed up, then counted. */
export async function countRoundTrips(
  command: (dbUrl: string, port: number) => ServerCommand,
  pgUrl: string,
  workloads: readonly RoundTripWorkload[],
  count: number,
  readyTimeoutMs: number,
): Promise<ReadonlyMap<string, Measured<RoundTrips>>> {
  const results = new Map<string, Measured<RoundTrips>>();
  const proxy = await startPgCountingProxy(pgUrl);
  try {
    const server = await startServer(command(proxy.url, await freePort()), readyTimeoutMs).catch(
      (e: unknown) => {
        throw new Error(`counting instance: ${e instanceof Error ? e.message : String(e)}`);
      },
    );
    // Its own connections, closed before the stop: a rest server asked to stop waits a second for
    // a request on a connection left open.
    const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    try {
      for (const workload of workloads) {
        try {
          const warmup = workload.warmup ?? Math.max(CONCURRENCY * 5, count / 4);
          const cold = proxy.counts();
          await sendAll(agent, server.baseUrl, workload.requests, 0, warmup);
          const before = proxy.counts();
          // Counted from where the warm-up stopped (a first pass ends at the list's start again).
          await sendAll(agent, server.baseUrl, workload.requests, workload.warmup ?? count, count);
          const value = perRequest(before, proxy.counts(), count);
          results.set(workload.name, {
            ok: true,
            value:
              workload.warmup === undefined
                ? value
                : {
                    ...value,
                    firstPass: {
                      requests: warmup,
                      flightsPerRequest: (before.flights - cold.flights) / warmup,
                    },
                  },
          });
        } catch (e) {
          results.set(workload.name, {
            ok: false,
            reason: oneLine(e instanceof Error ? e.message : String(e), 200),
          });
        }
      }
    } finally {
      agent.destroy();
      await server.stop();
    }
  } catch (e) {
    const reason = oneLine(e instanceof Error ? e.message : String(e), 300);
    for (const workload of workloads)
      if (!results.has(workload.name)) results.set(workload.name, { ok: false, reason });
  } finally {
    await proxy.close();
  }
  return results;
}
