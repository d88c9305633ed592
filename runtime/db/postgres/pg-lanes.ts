// Lanes: pipelined pg clients that concurrent requests share for work that fits in one Sync (a
// single statement, or a native-RLS request's settings and statement). Each such request is its
// own implicit transaction that its Sync commits or rolls back, and PostgreSQL answers the Syncs of
// one connection in order, so requests need not hold a client each
// (https://www.postgresql.org/docs/current/protocol-flow.html#PROTOCOL-FLOW-PIPELINING).
//
// What it saves: a lane's socket is corked from its first request of an event-loop turn until the
// turn's I/O callbacks are done (setImmediate), so the requests that turn sends on one lane leave in
// one write, and PostgreSQL reads them in one wake-up. Under load that is fewer system calls and
// fewer context switches on both sides, which dominate a request's cost on a small machine
// (docs/performance.md). Work that needs an explicit transaction keeps a client of its own.
//
// A lane carries at most LANE_DEPTH requests at once; more wait in one queue, first come first
// served, for the first lane that frees. Without the bound every request went to the lane with the
// fewest in flight, and a backend the machine descheduled held up every request queued on it: the
// p99 of native reads was 1.2–1.5× that of the bound's (docs/performance.md).
//
// A lane is taken from the pool once and kept; the pool's other clients serve explicit
// transactions. A lane whose connection failed or that was prepared before a schema change is
// retired: it takes no new request and goes back to the pool (destroyed) when its last request has
// settled. A failing statement is no reason: one-sync.ts knows which names PostgreSQL kept.
//
// A request whose client went away (its signal aborted) leaves the queue at once. A lane runs its
// requests in the order they were sent, so the oldest in flight is the one its backend runs: when
// that one was abandoned, its statement is cancelled (pg-cancel.ts), again as each request settles
// while the oldest is abandoned, and the lane takes no new request until no cancel is on its way.
// A cancel that arrives just as the abandoned statement ends meets the next one on the lane, which
// then fails like a timed-out statement (503, retryable); waiting instead would hold that request,
// and the server's own queries, behind a statement nobody reads. At most `maxWaiting` requests
// queue; one more is refused at once.

import type pg from 'pg';
import { CANCEL_AGAIN_MS } from '../map-db-error.js';

export interface Lane {
  readonly client: pg.PoolClient;
  /** The lane takes no new request (its connection failed, or the server ended its session). */
  readonly retire: () => void;
}

/** A request in flight on a lane, with its client's signal. */
interface Running {
  readonly signal: AbortSignal | undefined;
}

interface LaneState extends Lane {
  inflight: number;
  readonly running: Set<Running>;
  /** A cancel is on its way to the backend; `settledSince`: a request settled meanwhile. */
  cancelling: boolean;
  settledSince: boolean;
  corked: boolean;
  retired: boolean;
  /** Called once the lane has gone back to the pool (close waits for it). */
  released?: () => void;
}

export interface Lanes {
  /**
   * Runs `fn` on the lane with the fewest requests in flight, or on a new lane while fewer than
   * the limit exist and every lane is busy; when every lane carries LANE_DEPTH requests, on the
   * first lane that frees. Undefined when no lane can take it (limit 0, closed, or every lane still
   * connecting): the caller checks out a client of its own.
   * `fn` must send its work on the lane's client before its first `await`. When `signal` aborts,
   * a queued request is dropped (rejects with `gone()`) and a running one may be cancelled (above);
   * a request that would queue behind `maxWaiting` others rejects with `overloaded()` at once.
   */
  run<T>(fn: (lane: Lane) => Promise<T>, signal?: AbortSignal): Promise<T> | undefined;
  /**
   * Waits until every queued request has started, retires every lane, and resolves when each has
   * gone back to the pool.
   */
  close(): Promise<void>;
}

/** How many of a pool's clients become lanes: half, so that explicit transactions keep the rest. */
export const laneCount = (poolMax: number): number => Math.floor(poolMax / 2);

/**
 * The most requests one lane carries at once: enough that its backend finds the next request
 * already sent when it finishes one (with 1, throughput fell by a tenth), few enough that a stalled
 * backend holds up only two others. 2 and 3 gave the same p99 in the peer harness; 3 the most req/s.
 */
export const LANE_DEPTH = 3;

export interface LaneOptions {
  /** At most this many lanes; 0: none (every request checks out a client of its own). */
  readonly limit: number;
  /** At most this many requests in flight on one lane (LANE_DEPTH). */
  readonly depth: number;
  /** A lane whose client is stale (prepared before a schema change) is retired when next picked. */
  readonly stale: (client: pg.PoolClient) => boolean;
  /** What a request fails with when its new lane could not connect. */
  readonly connectError: (e: unknown) => unknown;
  /** At most this many requests wait in the queue. */
  readonly maxWaiting: number;
  /** What a request refused for a full queue, and one dropped for its client, fail with. */
  readonly overloaded: () => unknown;
  readonly gone: () => unknown;
  /** Cancels what the client's backend runs; resolves once the cancel has been delivered. */
  readonly cancel: (client: pg.PoolClient) => Promise<void>;
}

/** A request waiting for a lane: started on the lane given, or on a new lane when none is. */
type Queued = (lane: LaneState | undefined) => void;

export function createLanes(pool: pg.Pool, options: LaneOptions): Lanes {
  const { limit, depth, stale, connectError } = options;
  const lanes: LaneState[] = [];
  let connecting = 0;
  let closed = false;
  const queue: Queued[] = [];
  let drained: (() => void) | undefined;

  // A lane's client is always destroyed when it goes back: it is retired because its connection
  // failed, it is stale, or the adapter closes.
  const release = (lane: LaneState): void => {
    lane.client.removeListener('error', lane.retire);
    lane.client.removeListener('end', lane.retire);
    lane.client.release(true);
    lane.released?.();
  };

  const retire = (lane: LaneState): void => {
    if (lane.retired) return;
    lane.retired = true;
    const at = lanes.indexOf(lane);
    if (at >= 0) lanes.splice(at, 1);
    if (lane.inflight === 0) release(lane);
  };

  // Uncorked once this turn's I/O callbacks, and the promise jobs they started, have run.
  const cork = (lane: LaneState): void => {
    if (lane.corked) return;
    lane.corked = true;
    lane.client.connection.stream.cork();
    setImmediate(() => {
      lane.corked = false;
      lane.client.connection.stream.uncork();
    });
  };

  const adopt = (client: pg.PoolClient): LaneState => {
    const lane: LaneState = {
      client,
      inflight: 0,
      running: new Set(),
      cancelling: false,
      settledSince: false,
      corked: false,
      retired: false,
      retire: () => retire(lane),
    };
    // pg-pool removes its own error listener from a checked-out client; without one, the socket
    // error of a killed backend would crash the process.
    client.on('error', lane.retire);
    client.on('end', lane.retire);
    return lane;
  };

  /** The request the lane's backend runs (the oldest in flight) was abandoned by its client. */
  const abandoned = (lane: LaneState): boolean => {
    for (const r of lane.running) return r.signal?.aborted === true;
    return false;
  };

  /** Cancels the statement an abandoned lane runs; sent again while none has settled since. */
  const cancelAbandoned = (lane: LaneState): void => {
    if (lane.cancelling || !abandoned(lane)) return;
    lane.cancelling = true;
    lane.settledSince = false;
    void options.cancel(lane.client).then(() => {
      lane.cancelling = false;
      if (lane.settledSince) cancelAbandoned(lane);
      else if (abandoned(lane)) setTimeout(() => cancelAbandoned(lane), CANCEL_AGAIN_MS).unref();
      drain();
    });
  };

  const start = async <T>(
    lane: LaneState,
    fn: (lane: Lane) => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T> => {
    lane.inflight += 1;
    const running: Running = { signal };
    lane.running.add(running);
    const onAbort = (): void => cancelAbandoned(lane);
    signal?.addEventListener('abort', onAbort, { once: true });
    cork(lane);
    try {
      return await fn(lane);
    } finally {
      signal?.removeEventListener('abort', onAbort);
      lane.running.delete(running);
      lane.inflight -= 1;
      lane.settledSince = true;
      cancelAbandoned(lane);
      if (lane.retired && lane.inflight === 0) release(lane);
      drain();
    }
  };

  const connectThenStart = async <T>(fn: (lane: Lane) => Promise<T>, signal?: AbortSignal): Promise<T> => {
    connecting += 1;
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (e) {
      connecting -= 1;
      drain(); // a queued request may take the room this lane leaves
      throw connectError(e);
    }
    connecting -= 1;
    const lane = adopt(client);
    lanes.push(lane);
    if (signal?.aborted === true) {
      drain();
      throw options.gone();
    }
    const running = start(lane, fn, signal);
    if (closed && queue.length === 0) retire(lane);
    return running;
  };

  // Backwards, so that retiring a stale lane (which removes it) skips none.
  const pick = (): LaneState | undefined => {
    let best: LaneState | undefined;
    for (let i = lanes.length - 1; i >= 0; i -= 1) {
      const lane = lanes[i];
      if (lane === undefined) continue;
      if (stale(lane.client)) retire(lane);
      // A lane being cancelled, or running an abandoned request, takes none until that settles.
      else if (lane.cancelling || abandoned(lane)) continue;
      else if (best === undefined || lane.inflight <= best.inflight) best = lane;
    }
    return best;
  };

  // Where the next request goes: a new lane while there is room and every lane is busy, else the
  // lane with the fewest in flight if it is under the depth; undefined: it has to wait.
  const place = (): LaneState | 'new' | undefined => {
    const best = pick();
    if (lanes.length + connecting < limit && (best === undefined || best.inflight > 0)) return 'new';
    return best !== undefined && best.inflight < depth ? best : undefined;
  };

  // Starts queued requests, oldest first, while a lane can take them. Runs whenever a request on a
  // lane settles: its own lane has room again, or (if that lane was retired) a new one may open.
  function drain(): void {
    while (queue.length > 0) {
      const at = place();
      if (at === undefined) return;
      queue.shift()?.(at === 'new' ? undefined : at);
    }
    drained?.();
  }

  const enqueue = <T>(fn: (lane: Lane) => Promise<T>, signal?: AbortSignal): Promise<T> => {
    if (queue.length >= options.maxWaiting) return Promise.reject(options.overloaded());
    return new Promise<T>((resolve, reject) => {
      const drop = (): void => {
        const at = queue.indexOf(queued);
        if (at >= 0) queue.splice(at, 1);
        reject(options.gone());
      };
      const queued: Queued = (lane) => {
        signal?.removeEventListener('abort', drop);
        // Settled either way into this promise: nothing is left unhandled.
        void (lane === undefined ? connectThenStart(fn, signal) : start(lane, fn, signal)).then(
          resolve,
          reject,
        );
      };
      signal?.addEventListener('abort', drop, { once: true });
      queue.push(queued);
    });
  };

  return {
    run(fn, signal) {
      if (limit <= 0 || closed) return undefined;
      if (signal?.aborted === true) return Promise.reject(options.gone());
      if (queue.length > 0) return enqueue(fn, signal);
      const at = place();
      if (at === 'new') return connectThenStart(fn, signal);
      if (at !== undefined) return start(at, fn, signal);
      return lanes.length === 0 ? undefined : enqueue(fn, signal);
    },
    async close() {
      closed = true;
      if (queue.length > 0) await new Promise<void>((resolve) => (drained = resolve));
      const released: Promise<void>[] = [];
      for (const lane of [...lanes]) {
        if (lane.inflight > 0) released.push(new Promise<void>((resolve) => (lane.released = resolve)));
        retire(lane);
      }
      await Promise.all(released);
    },
  };
}
