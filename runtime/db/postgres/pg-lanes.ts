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
// (BENCHMARKS.md, stop 27). Work that needs an explicit transaction keeps a client of its own.
//
// A lane is taken from the pool once and kept; the pool's other clients serve explicit
// transactions. A lane whose connection failed, that holds a statement name of unknown state, or
// that was prepared before a schema change is retired: it takes no new request and goes back to
// the pool (destroyed) when its last request has settled.

import type pg from 'pg';

export interface Lane {
  readonly client: pg.PoolClient;
  /** The lane takes no new request (its connection failed, or a name's state is unknown). */
  readonly retire: () => void;
}

interface LaneState extends Lane {
  inflight: number;
  corked: boolean;
  retired: boolean;
}

export interface Lanes {
  /**
   * Runs `fn` on the lane with the fewest requests in flight, or on a new lane while fewer than
   * the limit exist and every lane is busy. Undefined when no lane can take it now (limit 0,
   * closed, or every lane still connecting): the caller checks out a client of its own.
   * `fn` must send its work on the lane's client before its first `await`.
   */
  run<T>(fn: (lane: Lane) => Promise<T>): Promise<T> | undefined;
  /** Retires every lane; resolves when each has gone back to the pool. */
  close(): Promise<void>;
}

/** How many of a pool's clients become lanes: half, so that explicit transactions keep the rest. */
export const laneCount = (poolMax: number): number => Math.floor(poolMax / 2);

export interface LaneOptions {
  /** At most this many lanes; 0: none (every request checks out a client of its own). */
  readonly limit: number;
  /** A lane whose client is stale (prepared before a schema change) is retired when next picked. */
  readonly stale: (client: pg.PoolClient) => boolean;
  /** What a request fails with when its new lane could not connect. */
  readonly connectError: (e: unknown) => unknown;
}

export function createLanes(pool: pg.Pool, { limit, stale, connectError }: LaneOptions): Lanes {
  const lanes: LaneState[] = [];
  let connecting = 0;
  let closed = false;
  const waiters = new Map<LaneState, () => void>();

  // A lane's client is always destroyed when it goes back: it is retired because its connection
  // failed, a statement name's state is unknown, it is stale, or the adapter closes.
  const release = (lane: LaneState): void => {
    lane.client.removeListener('error', lane.retire);
    lane.client.removeListener('end', lane.retire);
    lane.client.release(true);
    waiters.get(lane)?.();
    waiters.delete(lane);
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

  const start = async <T>(lane: LaneState, fn: (lane: Lane) => Promise<T>): Promise<T> => {
    lane.inflight += 1;
    cork(lane);
    try {
      return await fn(lane);
    } finally {
      lane.inflight -= 1;
      if (lane.retired && lane.inflight === 0) release(lane);
    }
  };

  const connectThenStart = async <T>(fn: (lane: Lane) => Promise<T>): Promise<T> => {
    connecting += 1;
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (e) {
      throw connectError(e);
    } finally {
      connecting -= 1;
    }
    const lane = adopt(client);
    lanes.push(lane);
    const running = start(lane, fn);
    if (closed) retire(lane);
    return running;
  };

  // Backwards, so that retiring a stale lane (which removes it) skips none.
  const pick = (): LaneState | undefined => {
    let best: LaneState | undefined;
    for (let i = lanes.length - 1; i >= 0; i -= 1) {
      const lane = lanes[i];
      if (lane === undefined) continue;
      if (stale(lane.client)) retire(lane);
      else if (best === undefined || lane.inflight <= best.inflight) best = lane;
    }
    return best;
  };

  return {
    run(fn) {
      if (limit <= 0 || closed) return undefined;
      const best = pick();
      const room = lanes.length + connecting < limit;
      if (room && (best === undefined || best.inflight > 0)) return connectThenStart(fn);
      return best === undefined ? undefined : start(best, fn);
    },
    async close() {
      closed = true;
      const released: Promise<void>[] = [];
      for (const lane of [...lanes]) {
        if (lane.inflight > 0) released.push(new Promise<void>((resolve) => waiters.set(lane, resolve)));
        retire(lane);
      }
      await Promise.all(released);
    },
  };
}
