// One load window of the bench's load driver (bench/driver.ts): autocannon against one server,
// ended by a time, by a number of requests or by the loads it runs beside, with throughput, status
// counts and latency percentiles of every response.

import autocannon from 'autocannon';
import type { LoadRequest, LoadResult, LoadSpec } from './driver-protocol.js';

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

/**
 * autocannon ends a window at its next sample tick (every `sampleInt` ms, 1 s by default) once its
 * connections are done: a window that ends with its requests, or is stopped, ticks every 10 ms
 * instead, so it ends within 10 ms of its last response. A timed window keeps the default.
 */
const COUNTED_SAMPLE_MS = 10;
/** The limit of a `beside` window, stopped as soon as the loads it runs beside have finished. */
const BESIDE_LIMIT_SECONDS = 3600;

interface RunningLoad {
  readonly spec: LoadSpec;
  readonly done: Promise<LoadResult>;
  /** Ends the window at its next sample tick (how a `beside` window ends). */
  stop(): void;
}

function startLoad(spec: LoadSpec): RunningLoad {
  const samples = new LatencySamples();
  const nextRequest = sharedRotation(spec.requests);
  const window = spec.window;
  let instance: autocannon.Instance | undefined;
  const done = new Promise<LoadResult>((resolve, reject) => {
    const started = performance.now();
    let lastResponse: number | undefined;
    instance = autocannon(
      {
        url: spec.baseUrl,
        connections: spec.connections,
        ...(window.kind === 'seconds'
          ? { duration: window.seconds }
          : window.kind === 'requests'
            ? { amount: window.requests, sampleInt: COUNTED_SAMPLE_MS }
            : { duration: BESIDE_LIMIT_SECONDS, sampleInt: COUNTED_SAMPLE_MS }),
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
        // autocannon's duration runs to its sample tick, rounded to 10 ms: right for a timed window,
        // not for one that ends with its last response a fraction of a second in.
        const seconds =
          window.kind === 'seconds'
            ? result.duration
            : ((lastResponse ?? performance.now()) - started) / 1000;
        resolve({
          label: spec.label,
          durationSeconds: seconds,
          responses,
          rps: seconds > 0 ? responses / seconds : 0,
          non2xx: result.non2xx,
          errors: result.errors,
          timeouts: result.timeouts,
          statusCounts,
          latencyMs: samples.percentiles(),
        });
      },
    );
    instance.on('response', (_client, _status, _bytes, responseTime) => {
      lastResponse = performance.now();
      samples.add(responseTime);
    });
  });
  return { spec, done, stop: () => instance?.stop() };
}

/** Starts every load at once; the `beside` ones are stopped when all the others have finished. */
export async function runTogether(loads: readonly LoadSpec[]): Promise<LoadResult[]> {
  if (loads.length > 0 && loads.every((l) => l.window.kind === 'beside'))
    throw new Error('every load runs beside another: none would end');
  const running = loads.map(startLoad);
  await Promise.allSettled(running.filter((r) => r.spec.window.kind !== 'beside').map((r) => r.done));
  for (const r of running) if (r.spec.window.kind === 'beside') r.stop();
  return Promise.all(running.map((r) => r.done));
}
