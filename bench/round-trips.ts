// Round trips to PostgreSQL per request, outside the timed runs: a second instance of the
// contender connects through the counting proxy, warms its pool, then serves N requests.

import type { LoadRequest } from './driver-protocol.js';
import { startPgCountingProxy, type PgTrafficCounts } from './pg-proxy.js';
import type { Measured, RoundTrips } from './report-model.js';
import { freePort, oneLine, startServer, type ServerCommand } from './server-process.js';
import { send } from './workloads.js';

const CONCURRENCY = 4;

/** Sends `count` requests from `requests` (in turn) with a few in flight; any non-2xx is an error. */
async function sendAll(
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
      const answer = await send(baseUrl, request);
      if (answer.status < 200 || answer.status > 299) {
        throw new Error(`${request.method} ${request.path.split('?')[0] ?? ''} answered ${answer.status}`);
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
  newConnections: after.connections - before.connections,
});

export interface RoundTripWorkload {
  readonly name: string;
  readonly requests: readonly LoadRequest[];
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
    try {
      for (const workload of workloads) {
        try {
          await sendAll(server.baseUrl, workload.requests, 0, Math.max(CONCURRENCY * 5, count / 4));
          const before = proxy.counts();
          await sendAll(server.baseUrl, workload.requests, count, count);
          results.set(workload.name, { ok: true, value: perRequest(before, proxy.counts(), count) });
        } catch (e) {
          results.set(workload.name, {
            ok: false,
            reason: oneLine(e instanceof Error ? e.message : String(e), 200),
          });
        }
      }
    } finally {
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
