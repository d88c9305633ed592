// The schema the runtime plans against: introspected once, re-checked with the adapter's cheap
// schemaVersion() at most once per interval, so new tables and columns appear without a restart.

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

export function createSchemaCache(adapter: Adapter, options: SchemaCacheOptions = {}): SchemaCache {
  const interval = options.checkIntervalMs ?? 1000;
  const clock = options.clock ?? Date.now;
  let snapshot: SchemaSnapshot | undefined;
  let version: string | undefined;
  let lastCheck = -Infinity;
  let lastRefresh = -Infinity;
  let inFlight: Promise<SchemaSnapshot> | undefined;

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

  const get = (): Promise<SchemaSnapshot> => {
    if (snapshot === undefined) return shared(load);
    if (clock() - lastCheck < interval) return inFlight ?? Promise.resolve(snapshot);
    return shared(check);
  };

  const table = async (name: string): Promise<TableInfo | undefined> => {
    const found = (await get()).tables.get(name);
    if (found !== undefined || clock() - lastRefresh < interval) return found;
    return (await refresh()).tables.get(name);
  };

  const invalidate = (): void => {
    lastCheck = lastRefresh = -Infinity;
  };

  return { get, refresh, table, invalidate };
}
