// The schema the runtime plans against: introspected once, re-checked with the adapter's cheap
// schemaVersion() at most once per interval, so new tables and columns appear without a restart.
//
// A request waits for a due check at most CHECK_WAIT_MS, then goes on with the snapshot it has
// (the check goes on and the next requests see its result). The check needs a connection, and
// when every connection is held by slow statements it waits for one without counting among the
// requests that wait (-db.max_waiting: those are the clients'): every request behind it would
// wait too, none reaching the count that refuses one more at once with 503 overloaded. Only after
// invalidate() (a statement met another schema) does a request wait for the check to its end.

import type { DbAdapter, SchemaSnapshot, TableInfo } from './adapter.js';

export interface SchemaCacheOptions {
  /** Minimum time between two schema version checks (and between refreshes for unknown tables). */
  readonly checkIntervalMs?: number;
  /** Milliseconds since some epoch; injected for tests. */
  readonly clock?: () => number;
}

export interface SchemaCache {
  /** The current snapshot; checks the schema version when the interval has passed. */
  get(): Promise<SchemaSnapshot>;
  /** Introspects now, whatever the version says. */
  refresh(): Promise<SchemaSnapshot>;
  /** A table by name; an unknown name triggers at most one refresh per interval before `undefined`. */
  table(name: string): Promise<TableInfo | undefined>;
  /**
   * A statement met a schema other than the snapshot's (a column or table renamed while serving):
   * the next get() checks the schema version, whatever the interval says.
   */
  invalidate(): void;
}

type Adapter = Pick<DbAdapter, 'introspect' | 'schemaVersion'>;

/** How long a request waits for a due check of an unchanged-so-far schema before it goes on. */
export const CHECK_WAIT_MS = 200;

export function createSchemaCache(adapter: Adapter, options: SchemaCacheOptions = {}): SchemaCache {
  const interval = options.checkIntervalMs ?? 1000;
  const clock = options.clock ?? Date.now;
  let snapshot: SchemaSnapshot | undefined;
  let version: string | undefined;
  let lastCheck = -Infinity;
  let lastRefresh = -Infinity;
  let inFlight: Promise<SchemaSnapshot> | undefined;
  /** Set by invalidate(): the next check is waited for, whatever it takes. */
  let invalidated = false;

  // Concurrent callers share one check or refresh instead of each querying the catalog.
  const shared = (work: () => Promise<SchemaSnapshot>): Promise<SchemaSnapshot> => {
    inFlight ??= work().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  };

  const load = async (): Promise<SchemaSnapshot> => {
    lastCheck = lastRefresh = clock();
    // The version is read first: a change racing with introspect() is seen by the next check.
    const v = await adapter.schemaVersion();
    const s = await adapter.introspect();
    version = v;
    snapshot = s;
    return s;
  };

  const check = async (): Promise<SchemaSnapshot> => {
    lastCheck = clock();
    const v = await adapter.schemaVersion();
    return v === version && snapshot !== undefined ? snapshot : load();
  };

  const refresh = (): Promise<SchemaSnapshot> => shared(load);

  /** The check, or the snapshot there is if the check has not answered within CHECK_WAIT_MS. */
  const boundedBy = (current: SchemaSnapshot, checking: Promise<SchemaSnapshot>): Promise<SchemaSnapshot> => {
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<SchemaSnapshot>((resolve) => {
      timer = setTimeout(() => resolve(snapshot ?? current), CHECK_WAIT_MS);
    });
    return Promise.race([checking, waited]).finally(() => clearTimeout(timer));
  };

  const get = (): Promise<SchemaSnapshot> => {
    const current = snapshot;
    if (current === undefined) return shared(load);
    if (invalidated) {
      invalidated = false;
      return shared(check);
    }
    if (clock() - lastCheck < interval) {
      return inFlight === undefined ? Promise.resolve(current) : boundedBy(current, inFlight);
    }
    return boundedBy(current, shared(check));
  };

  const table = async (name: string): Promise<TableInfo | undefined> => {
    const found = (await get()).tables.get(name);
    if (found !== undefined || clock() - lastRefresh < interval) return found;
    return (await refresh()).tables.get(name);
  };

  const invalidate = (): void => {
    lastCheck = lastRefresh = -Infinity;
    invalidated = true;
  };

  return { get, refresh, table, invalidate };
}
