import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DbAdapter } from '../../../../runtime/db/adapter.js';
import { createAdapter } from '../../../../runtime/db/create-adapter.js';
import { CHECK_WAIT_MS, createSchemaCache } from '../../../../runtime/db/schema-cache.js';

describe('createSchemaCache on a SQLite database', () => {
  let adapter: DbAdapter;
  let now: number;
  const calls = { schemaVersion: 0, introspect: 0 };
  // The real adapter, counting how often the cache reaches the catalog.
  const counted = (): Pick<DbAdapter, 'introspect' | 'schemaVersion'> => ({
    schemaVersion: () => {
      calls.schemaVersion++;
      return adapter.schemaVersion();
    },
    introspect: () => {
      calls.introspect++;
      return adapter.introspect();
    },
  });

  beforeEach(async () => {
    adapter = await createAdapter('sqlite://:memory:');
    await adapter.exec('CREATE TABLE first (id integer PRIMARY KEY)');
    now = 10_000;
    calls.schemaVersion = 0;
    calls.introspect = 0;
  });
  afterEach(() => adapter.close());

  const cache = () => createSchemaCache(counted(), { checkIntervalMs: 1000, clock: () => now });

  it('introspects once, then checks the version at most once per interval', async () => {
    const c = cache();
    const s1 = await c.get();
    expect(s1.tables.has('first')).toBe(true);
    expect(await c.get()).toBe(s1);
    now += 999;
    expect(await c.get()).toBe(s1);
    expect(calls).toStrictEqual({ schemaVersion: 1, introspect: 1 });
    now += 1;
    expect(await c.get()).toBe(s1);
    expect(calls).toStrictEqual({ schemaVersion: 2, introspect: 1 });
  });

  it('introspects again only when the version changed', async () => {
    const c = cache();
    await c.get();
    await adapter.exec('ALTER TABLE first ADD COLUMN name text');
    expect((await c.get()).tables.get('first')?.columns).toHaveLength(1);
    now += 1000;
    expect((await c.get()).tables.get('first')?.columns.map((col) => col.name)).toStrictEqual(['id', 'name']);
    expect(calls).toStrictEqual({ schemaVersion: 3, introspect: 2 });
  });

  it('shares one catalog query between concurrent callers', async () => {
    const c = cache();
    const snapshots = await Promise.all([c.get(), c.get(), c.table('first'), c.get()]);
    expect(new Set(snapshots.slice(0, 2))).toHaveProperty('size', 1);
    expect(calls).toStrictEqual({ schemaVersion: 1, introspect: 1 });
  });

  it('refreshes at most once per interval for unknown tables, and finds a new one', async () => {
    const c = cache();
    expect(await c.table('second')).toBeUndefined();
    now += 1000;
    expect(await c.table('second')).toBeUndefined();
    expect(await c.table('third')).toBeUndefined();
    expect(await c.table('second')).toBeUndefined();
    expect(calls.introspect).toBe(2);
    await adapter.exec('CREATE TABLE second (id integer PRIMARY KEY)');
    expect(await c.table('second')).toBeUndefined();
    now += 1000;
    expect((await c.table('second'))?.primaryKey).toStrictEqual(['id']);
    expect(calls.introspect).toBe(3);
  });

  it('refresh() introspects whatever the interval', async () => {
    const c = cache();
    await c.get();
    await adapter.exec('CREATE TABLE second (id integer PRIMARY KEY)');
    expect((await c.refresh()).tables.has('second')).toBe(true);
    expect(calls.introspect).toBe(2);
  });

  it('invalidate(): the next get() checks the version whatever the interval, and introspects if it moved', async () => {
    const c = cache();
    const s1 = await c.get();
    await adapter.exec('ALTER TABLE first RENAME COLUMN id TO key');
    expect(await c.get()).toBe(s1);
    c.invalidate();
    expect((await c.get()).tables.get('first')?.columns.map((col) => col.name)).toStrictEqual(['key']);
    // the check, then the version that goes with the new snapshot
    expect(calls).toStrictEqual({ schemaVersion: 3, introspect: 2 });
    c.invalidate();
    await c.get();
    expect(calls).toStrictEqual({ schemaVersion: 4, introspect: 2 });
  });
  it('a due check that does not answer holds a request at most CHECK_WAIT_MS; after invalidate() to its end', async () => {
    // The catalog query waits for a connection that slow statements hold (here: until let go).
    let letGo = (): void => undefined;
    let stuck = false;
    const c = createSchemaCache(
      {
        schemaVersion: () =>
          stuck ? new Promise<string>((resolve) => (letGo = () => resolve('v2'))) : adapter.schemaVersion(),
        introspect: () => adapter.introspect(),
      },
      { checkIntervalMs: 1000, clock: () => now },
    );
    const s1 = await c.get();
    stuck = true;
    now += 1000;
    const started = performance.now();
    expect(await c.get()).toBe(s1);
    expect(await c.get()).toBe(s1);
    expect(performance.now() - started).toBeGreaterThanOrEqual(CHECK_WAIT_MS * 2 - 5);
    stuck = false;
    letGo();
    await new Promise((resolve) => setTimeout(resolve, 10));
    // The check answered (another version): the snapshot was read again.
    const s2 = await c.get();
    expect(s2).not.toBe(s1);
    stuck = true;
    c.invalidate();
    let settled = false;
    const waiting = c.get().then((s) => ((settled = true), s));
    await new Promise((resolve) => setTimeout(resolve, CHECK_WAIT_MS * 2));
    expect(settled).toBe(false);
    stuck = false;
    letGo();
    expect(await waiting).not.toBe(s2);
  });
});
