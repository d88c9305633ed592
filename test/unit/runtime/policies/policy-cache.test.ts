import { afterEach, describe, expect, it } from 'vitest';
import type { PolicyRow } from '../../../../compiler/types.js';
import type { ChangeSource } from '../../../../runtime/db/change-source.js';
import { createPolicyCache, type PolicyCache } from '../../../../runtime/policies/policy-cache.js';

const row = (id: number, expression: string): PolicyRow => ({
  id,
  table_name: 'all',
  action: 'all',
  expression,
  description: `policy ${id}`,
  columns: null,
});

/** A policy table in memory whose reads can be held back, and a count of compilations. */
function fakeTable(initial: readonly PolicyRow[]) {
  let rows = [...initial];
  let loads = 0;
  let compiles = 0;
  let gate: Promise<void> | undefined;
  return {
    set(next: readonly PolicyRow[]) {
      rows = [...next];
    },
    hold(): () => void {
      let release!: () => void;
      gate = new Promise((r) => (release = r));
      return () => {
        gate = undefined;
        release();
      };
    },
    load: async () => {
      loads += 1;
      const snapshot = [...rows];
      if (gate !== undefined) await gate;
      return snapshot;
    },
    compile: (r: readonly PolicyRow[]) => {
      compiles += 1;
      return r.map((x) => x.expression).join(' | ');
    },
    get loads() {
      return loads;
    },
    get compiles() {
      return compiles;
    },
  };
}

const caches: PolicyCache<string>[] = [];
afterEach(async () => {
  await Promise.all(caches.splice(0).map((c) => c.close()));
});

function cacheOver(table: ReturnType<typeof fakeTable>, changes: ChangeSource): PolicyCache<string> {
  const cache = createPolicyCache({ load: table.load, compile: table.compile, changes });
  caches.push(cache);
  return cache;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('policy cache', () => {
  it('loads and compiles once, then serves every request from memory', async () => {
    const table = fakeTable([row(1, 'user_id = auth_user.id')]);
    const cache = cacheOver(table, { kind: 'poll', intervalMs: 60_000 });
    const snapshots = await Promise.all(Array.from({ length: 20 }, () => cache.get()));
    expect(new Set(snapshots.map((s) => s.compiled))).toEqual(new Set(['user_id = auth_user.id']));
    expect(table.loads).toBe(1);
    expect(table.compiles).toBe(1);
  });

  it('sees a change made through the API on the next request after invalidate()', async () => {
    const table = fakeTable([row(1, 'a')]);
    const cache = cacheOver(table, { kind: 'poll', intervalMs: 60_000 });
    expect((await cache.get()).compiled).toBe('a');
    table.set([row(1, 'a'), row(2, 'b')]);
    expect((await cache.get()).compiled).toBe('a');
    cache.invalidate();
    expect((await cache.get()).compiled).toBe('a | b');
  });

  it('does not count a load that started before the change', async () => {
    const table = fakeTable([row(1, 'old')]);
    const cache = cacheOver(table, { kind: 'poll', intervalMs: 60_000 });
    await cache.get();
    cache.invalidate();
    const release = table.hold();
    const early = cache.get();
    await sleep(5);
    table.set([row(1, 'new')]);
    cache.invalidate();
    const late = cache.get();
    release();
    expect((await early).compiled).toBe('old');
    expect((await late).compiled).toBe('new');
  });

  it('re-reads the rows periodically and recompiles only when they differ', async () => {
    const table = fakeTable([row(1, 'a')]);
    const cache = cacheOver(table, { kind: 'poll', intervalMs: 20 });
    await cache.get();
    await sleep(100);
    expect(table.loads).toBeGreaterThan(2);
    expect(table.compiles).toBe(1);
    table.set([row(1, 'changed elsewhere')]);
    await sleep(60);
    expect((await cache.get()).compiled).toBe('changed elsewhere');
    expect(table.compiles).toBe(2);
  });

  it('reloads in the background when a push source signals, and tells subscribers', async () => {
    const table = fakeTable([row(1, 'a')]);
    let signal: () => void = () => {
      throw new Error('not subscribed');
    };
    let closedSource = false;
    const cache = cacheOver(table, {
      kind: 'push',
      subscribe(onChange) {
        signal = onChange;
        return { close: async () => void (closedSource = true) };
      },
    });
    const seen: string[] = [];
    cache.subscribe((s) => seen.push(s.compiled));
    await cache.get();
    table.set([row(1, 'b')]);
    signal();
    await sleep(10);
    expect(seen).toEqual(['a', 'b']);
    expect(table.loads).toBe(2);
    expect((await cache.get()).compiled).toBe('b');
    await cache.close();
    expect(closedSource).toBe(true);
  });

  it('a signal that arrives while a load runs is loaded again after it, without waiting for a request', async () => {
    const table = fakeTable([row(1, 'a')]);
    let signal: () => void = () => {
      throw new Error('not subscribed');
    };
    const cache = cacheOver(table, {
      kind: 'push',
      subscribe(onChange) {
        signal = onChange;
        return { close: async () => undefined };
      },
    });
    const seen: string[] = [];
    cache.subscribe((s) => seen.push(s.compiled));
    await cache.get();
    // A first change starts a load that reads the rows before the second change commits.
    const release = table.hold();
    signal();
    await sleep(5);
    table.set([row(1, 'b')]);
    signal();
    release();
    await sleep(20);
    expect(seen).toEqual(['a', 'b']);
    expect(table.loads).toBe(3);
  });

  it('fails the request when the first load fails, and recovers on the next one', async () => {
    let fail = true;
    const cache = createPolicyCache({
      load: async () => {
        if (fail) throw new Error('database down');
        return [row(1, 'a')];
      },
      compile: (rows) => rows.length,
      changes: { kind: 'poll', intervalMs: 60_000 },
    });
    await expect(cache.get()).rejects.toThrow('database down');
    fail = false;
    expect((await cache.get()).compiled).toBe(1);
    await cache.close();
  });
});
