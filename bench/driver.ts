// The load driver: a separate process (forked by bench/run.ts) that runs autocannon on command
// and answers with throughput, status counts and latency percentiles of every response.

import autocannon from 'autocannon';
import { assertNever } from '../errors/rest-error.js';
import type { DriverCommand, DriverReply, LoadRequest, LoadResult, LoadSpec } from './driver-protocol.js';

/** Growable store of latencies in ms (float, from process.hrtime): exact percentiles, no 1 ms buckets. */
class LatencySamples {
  #values = new Float64Array(1 << 16);
  #length = 0;

  add(ms: number): void {
    if (this.#length === this.#values.length) {
      const bigger = new Float64Array(this.#values.length * 2);
      bigger.set(this.#values);
      this.#values = bigger;
    }
    this.#values[this.#length++] = ms;
  }

  percentiles(): LoadResult['latencyMs'] {
    const sorted = this.#values.slice(0, this.#length).sort();
    const at = (q: number): number =>
      sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0);
    return {
      p50: at(0.5),
      p90: at(0.9),
      p99: at(0.99),
      max: sorted.length === 0 ? 0 : (sorted[sorted.length - 1] ?? 0),
    };
  }
}

/**
 * One sequence over the list shared by every connection (autocannon rebuilds the request through
 * setupRequest each time): requests in flight at once are for different users, so the server
 * never sees 32 identical requests, and concurrent logins or PUTs never pile up on one user or row.
 */
function sharedRotation(requests: readonly LoadRequest[]): (req: autocannon.Request) => autocannon.Request {
  let next = 0;
  return (req) => {
    const r = requests[next++ % requests.length];
    if (r === undefined) return req;
    return {
      ...req,
      method: r.method,
      path: r.path,
      headers: { ...req.headers, ...r.headers },
      ...(r.body === undefined ? {} : { body: r.body }),
    };
  };
}

function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const samples = new LatencySamples();
  const nextRequest = sharedRotation(spec.requests);
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: spec.baseUrl,
        connections: spec.connections,
        duration: spec.durationSeconds,
        pipelining: 1,
        timeout: 10,
        requests: [{ setupRequest: nextRequest }],
      },
      (err, result) => {
        if (err) {
          reject(err instanceof Error ? err : new Error(String(err)));
          return;
        }
        const statusCounts: Record<string, number> = {};
        for (const [code, stat] of Object.entries(result.statusCodeStats ?? {}))
          statusCounts[code] = stat.count ?? 0;
        const responses = Object.values(statusCounts).reduce((a, b) => a + b, 0);
        resolve({
          label: spec.label,
          durationSeconds: result.duration,
          responses,
          rps: result.duration > 0 ? responses / result.duration : 0,
          non2xx: result.non2xx,
          errors: result.errors,
          timeouts: result.timeouts,
          statusCounts,
          latencyMs: samples.percentiles(),
        });
      },
    );
    instance.on('response', (_client, _status, _bytes, responseTime) => samples.add(responseTime));
  });
}

function reply(message: DriverReply): void {
  process.send?.(message);
}

process.on('message', (message: DriverCommand) => {
  switch (message.kind) {
    case 'run':
      Promise.all(message.loads.map(runLoad)).then(
        (results) => reply({ kind: 'done', runId: message.runId, results }),
        (e: unknown) =>
          reply({
            kind: 'failed',
            runId: message.runId,
            message: e instanceof Error ? e.message : String(e),
          }),
      );
      return;
    case 'exit':
      process.disconnect();
      return;
    default:
      assertNever(message, 'driver command');
  }
});

if (process.send === undefined) {
  console.error('bench/driver.js is started by bench/run.js through child_process.fork');
  process.exit(1);
}
reply({ kind: 'ready' });
