import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DbAdapter } from '../../../../runtime/db/adapter.js';
import { createAdapter } from '../../../../runtime/db/create-adapter.js';
import { createSchemaCache } from '../../../../runtime/db/schema-cache.js';

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
});
