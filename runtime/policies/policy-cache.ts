// The compiled policies of `auth_policies`, cached: requests never parse or compile. Reloaded
// on the next request after `invalidate()` (a change through the API), and within 2 s of a change
// made elsewhere — PostgreSQL: LISTEN on the `rest_policies` channel its trigger NOTIFYs;
// MySQL/MariaDB and SQLite: the rows re-read at most once per `pollIntervalMs` and compared.

import type { PolicyRow } from '../../compiler/types.js';
import type { ChangeSource } from '../db/change-source.js';

export interface PolicySnapshot<S> {
  readonly rows: readonly PolicyRow[];
  readonly compiled: S;
}

export interface PolicyCacheLogger {
  warn(fields: Readonly<Record<string, unknown>>, message: string): void;
}

export interface PolicyCacheOptions<S> {
  /** Reads every policy row (an empty list when the auth tables do not exist yet). */
  readonly load: () => Promise<readonly PolicyRow[]>;
  /** Parses and compiles once per distinct set of rows. */
  readonly compile: (rows: readonly PolicyRow[]) => S;
  readonly changes: ChangeSource;
  readonly logger?: PolicyCacheLogger;
}

export interface PolicyCache<S> {
  /** The current snapshot; waits for a reload when a change is pending. */
  get(): Promise<PolicySnapshot<S>>;
  /** A change was just committed through this process: the next `get()` sees it. */
  invalidate(): void;
  /** Called with every new snapshot whose rows differ from the previous one (the first load too). */
  subscribe(listener: (snapshot: PolicySnapshot<S>) => void): () => void;
  close(): Promise<void>;
}

export const DEFAULT_POLL_INTERVAL_MS = 1000;

const fingerprintOf = (rows: readonly PolicyRow[]): string =>
  JSON.stringify(rows.map((r) => [r.id, r.table_name, r.action, r.expression, r.description, r.columns]));

export function createPolicyCache<S>(options: PolicyCacheOptions<S>): PolicyCache<S> {
  let current: (PolicySnapshot<S> & { readonly fingerprint: string }) | undefined;
  /** Bumped by every known change; a snapshot is fresh when it was loaded at the latest one. */
  let wanted = 0;
  let loaded = -1;
  let inFlight: Promise<void> | undefined;
  let closed = false;
  const listeners = new Set<(snapshot: PolicySnapshot<S>) => void>();

  function install(rows: readonly PolicyRow[]): void {
    const fingerprint = fingerprintOf(rows);
    if (current?.fingerprint === fingerprint) return;
    current = Object.freeze({ rows, compiled: options.compile(rows), fingerprint });
    const snapshot = current;
    for (const listener of listeners) {
      try {
        listener(snapshot);
      } catch (e) {
        options.logger?.warn(
          { err: e instanceof Error ? e.message : String(e) },
          'policy change listener failed',
        );
      }
    }
  }

  /** One load at a time; a load started before a change does not count for that change. */
  function reload(): Promise<void> {
    if (inFlight !== undefined) return inFlight;
    const generation = wanted;
    inFlight = (async () => {
      try {
        install(await options.load());
        loaded = Math.max(loaded, generation);
      } finally {
        inFlight = undefined;
      }
    })();
    return inFlight;
  }

  function backgroundReload(): void {
    if (closed) return;
    const running = inFlight;
    if (running !== undefined) {
      // That load may have read the rows before this change: load again once it is done, so a
      // change made by hand reaches the subscribers (native RLS, the broken-policy log) without
      // waiting for a request to ask.
      void running
        .catch(() => undefined)
        .then(() => {
          if (loaded < wanted) backgroundReload();
        });
      return;
    }
    reload().catch((e: unknown) => {
      options.logger?.warn({ err: e instanceof Error ? e.message : String(e) }, 'policy reload failed');
    });
  }

  const changed = (): void => {
    wanted += 1;
    backgroundReload();
  };

  let stopChanges: () => Promise<void>;
  if (options.changes.kind === 'push') {
    const subscription = options.changes.subscribe(changed);
    stopChanges = () => subscription.close();
  } else {
    const poll = setInterval(backgroundReload, options.changes.intervalMs ?? DEFAULT_POLL_INTERVAL_MS);
    poll.unref();
    stopChanges = async () => clearInterval(poll);
  }

  return {
    async get() {
      const target = wanted;
      while (current === undefined || loaded < target) {
        if (inFlight !== undefined) await inFlight.catch(() => undefined);
        if (current !== undefined && loaded >= target) break;
        await reload();
      }
      return current;
    },
    invalidate() {
      wanted += 1;
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    async close() {
      closed = true;
      listeners.clear();
      await stopChanges();
      await inFlight?.catch(() => undefined);
    },
  };
}
