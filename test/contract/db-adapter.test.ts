// Contract of every DbAdapter, run against real SQLite, PostgreSQL and MariaDB databases:
// identical JSON for every supported type, transactions, introspection, schema versions.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DialectName } from '../../compiler/types.js';
import type { Row } from '../../runtime/db/adapter.js';
import { RestError } from '../../errors/rest-error.js';
import { createAdapter } from '../../runtime/db/create-adapter.js';
import { createSchemaCache } from '../../runtime/db/schema-cache.js';
import { ALL_KINDS, isAvailable, skipReason } from '../support/databases.js';
import { closeFixture, openFixture, q, rejection, type AdapterFixture } from './db-support.js';

const TYPES_DDL: Readonly<Record<DialectName, string>> = {
  postgres: `CREATE TABLE types (
    id serial PRIMARY KEY, i integer, big bigint, d numeric(12,3), f double precision, r real, b boolean,
    j jsonb, js json, dt date, ts timestamp(6), tz timestamptz, s text, v varchar(50))`,
  mysql: `CREATE TABLE types (
    id int AUTO_INCREMENT PRIMARY KEY, i int, big bigint, d decimal(12,3), f double, r float, b boolean,
    j json, js json, dt date, ts datetime(6), tz timestamp(6) NULL, s text, v varchar(50))`,
  sqlite: `CREATE TABLE types (
    id integer PRIMARY KEY, i integer, big bigint, d decimal(12,3), f double, r real, b boolean,
    j json, js json, dt date, ts timestamp, tz timestamptz, s text, v varchar(50))`,
};

const COLUMNS = ['i', 'big', 'd', 'f', 'r', 'b', 'j', 'js', 'dt', 'ts', 'tz', 's', 'v'] as const;
type Column = (typeof COLUMNS)[number];

const UNICODE = 'héllo wörld 😀 中文 "double" \'single\' \\ back\nline';

interface TypeCase {
  readonly name: string;
  /** Bound values; JSON columns take JSON text, MariaDB timestamps take UTC without an offset. */
  readonly input: (kind: DialectName) => Readonly<Record<Column, unknown>>;
  /** The row every database returns. */
  readonly output: Readonly<Record<Column, unknown>>;
}

const TYPE_CASES: readonly TypeCase[] = [
  {
    name: 'typical values',
    input: (kind) => ({
      i: -2147483648,
      big: 9007199254740991,
      d: 12345.678,
      f: 0.1,
      r: 1.1,
      b: true,
      j: JSON.stringify({ a: [1, 'x', null], ü: true, n: { deep: 1.5 } }),
      js: JSON.stringify([1, 2, 3]),
      dt: '2024-02-29',
      ts: '2024-01-02 03:04:05.123456',
      tz: kind === 'mysql' ? '2024-01-02 03:04:05.5' : '2024-01-02T05:04:05.5+02:00',
      s: UNICODE,
      v: '',
    }),
    output: {
      i: -2147483648,
      big: 9007199254740991,
      d: 12345.678,
      f: 0.1,
      r: 1.1,
      b: true,
      j: { a: [1, 'x', null], ü: true, n: { deep: 1.5 } },
      js: [1, 2, 3],
      dt: '2024-02-29',
      ts: '2024-01-02T03:04:05.123456',
      tz: '2024-01-02T03:04:05.5Z',
      s: UNICODE,
      v: '',
    },
  },
  {
    name: 'extremes: int8 beyond 2^53, false, JSON scalars, whole seconds',
    input: (kind) => ({
      i: 2147483647,
      big: '9223372036854775807',
      d: -0.001,
      f: -1e300,
      r: 0.5,
      b: false,
      j: JSON.stringify('just a string'),
      js: JSON.stringify(null),
      dt: '0001-01-01',
      ts: '1999-12-31 23:59:59',
      tz: kind === 'mysql' ? '2038-01-19 03:14:07' : '2038-01-19T03:14:07Z',
      s: ' ',
      v: 'x'.repeat(50),
    }),
    output: {
      i: 2147483647,
      big: '9223372036854775807',
      d: -0.001,
      f: -1e300,
      r: 0.5,
      b: false,
      j: 'just a string',
      js: null,
      dt: '0001-01-01',
      ts: '1999-12-31T23:59:59',
      tz: '2038-01-19T03:14:07Z',
      s: ' ',
      v: 'x'.repeat(50),
    },
  },
  {
    name: 'JSON strings whose text is itself JSON',
    input: () => ({
      ...(Object.fromEntries(COLUMNS.map((c) => [c, null])) as Record<Column, null>),
      j: JSON.stringify('123'),
      js: JSON.stringify('{"a": true}'),
    }),
    output: {
      ...(Object.fromEntries(COLUMNS.map((c) => [c, null])) as Record<Column, null>),
      j: '123',
      js: '{"a": true}',
    },
  },
  {
    name: 'NULL in every column',
    input: () => Object.fromEntries(COLUMNS.map((c) => [c, null])) as Record<Column, null>,
    output: Object.fromEntries(COLUMNS.map((c) => [c, null])) as Record<Column, null>,
  },
];

const pick = (row: Row | undefined): Record<string, unknown> =>
  Object.fromEntries(COLUMNS.map((c) => [c, row?.[c]]));

describe.each(ALL_KINDS)('%s adapter', (kind) => {
  const available = isAvailable(kind);
  let f: AdapterFixture;

  beforeAll(async () => {
    if (!available) return;
    f = await openFixture(kind);
    await f.adapter.exec(TYPES_DDL[kind]);
    await f.adapter.exec('CREATE TABLE items (id integer PRIMARY KEY, name varchar(20) NOT NULL UNIQUE)');
  });
  afterAll(() => (available ? closeFixture(f) : undefined));

  describe.skipIf(!available)(skipReason(kind) ?? 'round trip', () => {
    it.each(TYPE_CASES)('returns $name identically to the other databases', async ({ input, output }) => {
      const values = input(kind);
      const insert = await q(
        f.adapter,
        f.adapter.dialect,
        `INSERT INTO types (${COLUMNS.join(', ')}) VALUES (${COLUMNS.map(() => '?').join(', ')})`,
        COLUMNS.map((c) => values[c]),
      );
      expect(insert.rowCount).toBe(1);
      const id =
        insert.insertId ??
        (await q(f.adapter, f.adapter.dialect, 'SELECT max(id) AS id FROM types')).rows[0]?.['id'];
      const { rows } = await q(f.adapter, f.adapter.dialect, 'SELECT * FROM types WHERE id = ?', [id]);
      expect(rows).toHaveLength(1);
      expect(pick(rows[0])).toStrictEqual(output);
      expect(JSON.parse(JSON.stringify(rows[0]))).toStrictEqual({ id, ...output });
    });

    it('reads an expression that carries a column (a masked column, typedAs) as that column', async () => {
      const table = (await f.adapter.introspect()).tables.get('types');
      if (table === undefined) throw new Error('types was not introspected');
      const quote = (name: string) => f.adapter.dialect.quoteIdent(name);
      const typedAs = new Map(
        table.columns.filter((c) => (COLUMNS as readonly string[]).includes(c.name)).map((c) => [c.name, c]),
      );
      // Every value shown (ids after 0) or masked (none after the largest id).
      const statement = (after: number) => ({
        text: `SELECT ${COLUMNS.map((c) => `(CASE WHEN id > ${after} THEN ${quote(c)} END) AS ${quote(c)}`).join(', ')} FROM types ORDER BY id`,
        values: [],
        typedAs,
      });
      const plain = await q(f.adapter, f.adapter.dialect, 'SELECT * FROM types ORDER BY id');
      expect(plain.rows.length).toBeGreaterThan(0);
      const shown = await f.adapter.query(statement(0));
      expect(shown.rows.map(pick)).toStrictEqual(plain.rows.map(pick));
      const masked = await f.adapter.query(statement(Number.MAX_SAFE_INTEGER));
      expect(masked.rows.map(pick)).toStrictEqual(
        plain.rows.map(() => Object.fromEntries(COLUMNS.map((c) => [c, null]))),
      );
    });

    it('reads a column another connection retyped with its new type once the schema is introspected', async () => {
      const read = () => q(f.adapter, f.adapter.dialect, 'SELECT flag FROM retyped');
      const other = await createAdapter(f.db.url, { poolSize: 1 });
      try {
        await other.exec('CREATE TABLE retyped (id integer PRIMARY KEY, flag integer)');
        await other.exec('INSERT INTO retyped (id, flag) VALUES (1, 1)');
        await f.adapter.introspect();
        expect((await read()).rows).toStrictEqual([{ flag: 1 }]);
        await other.exec('DROP TABLE retyped');
        await other.exec('CREATE TABLE retyped (id integer PRIMARY KEY, flag boolean)');
        await other.exec('INSERT INTO retyped (id, flag) VALUES (1, TRUE)');
        await f.adapter.introspect();
        expect((await read()).rows).toStrictEqual([{ flag: true }]);
      } finally {
        await other.exec('DROP TABLE IF EXISTS retyped');
        await other.close();
      }
    });

    it('runs trusted DDL with several statements through exec()', async () => {
      await f.adapter.exec(
        'CREATE TABLE multi1 (id integer PRIMARY KEY); CREATE TABLE multi2 (id integer PRIMARY KEY);',
      );
      await f.adapter.exec('DROP TABLE multi1; DROP TABLE multi2');
      expect(
        [...(await f.adapter.introspect()).tables.keys()].filter((t) => t.startsWith('multi')),
      ).toStrictEqual([]);
    });

    it('binds objects and arrays as JSON text', async () => {
      const { rows } = await q(f.adapter, f.adapter.dialect, 'SELECT ? AS o, ? AS a', [
        { k: 'v' },
        [1, 'two'],
      ]);
      expect(rows[0]).toStrictEqual({ o: '{"k":"v"}', a: '[1,"two"]' });
    });

    it('reports integers from expressions (count, sum) as numbers and a bound LIMIT works', async () => {
      const { rows } = await q(f.adapter, f.adapter.dialect, 'SELECT count(*) AS n FROM types LIMIT ?', [5]);
      expect(rows).toStrictEqual([{ n: TYPE_CASES.length }]);
    });

    it('counts matched rows for UPDATE even when no value changes', async () => {
      await q(f.adapter, f.adapter.dialect, 'INSERT INTO items (id, name) VALUES (?, ?)', [100, 'same']);
      const r = await q(f.adapter, f.adapter.dialect, 'UPDATE items SET name = ? WHERE id = ?', [
        'same',
        100,
      ]);
      expect(r.rowCount).toBe(1);
      const d = await q(f.adapter, f.adapter.dialect, 'DELETE FROM items WHERE id = ?', [100]);
      expect(d).toStrictEqual({ rows: [], rowCount: 1 });
    });
  });

  describe.skipIf(!available)(skipReason(kind) ?? 'sessions', () => {
    it('returns timestamps with time zone in UTC whatever the session time zone', async () => {
      const zone: Readonly<Record<DialectName, string>> = {
        postgres: "SET LOCAL TimeZone = 'Asia/Kolkata'",
        mysql: "SET time_zone = '+05:30'",
        sqlite: 'SELECT 1',
      };
      await f.adapter.exec(
        'CREATE TABLE zoned (id integer PRIMARY KEY, tz ' +
          (kind === 'mysql' ? 'timestamp NULL' : 'timestamptz') +
          ')',
      );
      await q(f.adapter, f.adapter.dialect, 'INSERT INTO zoned (id, tz) VALUES (?, ?)', [
        1,
        kind === 'mysql' ? '2024-06-30 22:00:00' : '2024-06-30T22:00:00Z',
      ]);
      const rows = await f.adapter.transaction(async (tx) => {
        await q(tx, f.adapter.dialect, zone[kind]);
        const r = await q(tx, f.adapter.dialect, 'SELECT tz FROM zoned');
        // MySQL's SET lasts for the session: put the pooled connection back as it was.
        if (kind === 'mysql') await q(tx, f.adapter.dialect, "SET time_zone = '+00:00'");
        return r.rows;
      });
      expect(rows).toStrictEqual([
        { tz: kind === 'mysql' ? '2024-07-01T03:30:00Z' : '2024-06-30T22:00:00Z' },
      ]);
    });

    if (kind === 'mysql')
      it('runs every pooled MySQL session in UTC and strict mode', async () => {
        let release!: () => void;
        const gate = new Promise<void>((resolve) => (release = resolve));
        const read = (): Promise<readonly unknown[]> =>
          f.adapter.transaction(async (tx) => {
            const r = await q(
              tx,
              f.adapter.dialect,
              'SELECT @@SESSION.time_zone AS tz, @@SESSION.sql_mode AS mode',
            );
            await gate;
            return r.rows;
          });
        const both = Promise.all([read(), read()]);
        release();
        for (const rows of await both) {
          expect(rows).toStrictEqual([{ tz: '+00:00', mode: expect.stringContaining('STRICT_ALL_TABLES') }]);
        }
      });
  });

  describe.skipIf(!available)(skipReason(kind) ?? 'transactions', () => {
    const count = async (): Promise<unknown> =>
      (await q(f.adapter, f.adapter.dialect, 'SELECT count(*) AS n FROM items')).rows[0]?.['n'];

    it('commits when the callback resolves and returns its value', async () => {
      const before = await count();
      const result = await f.adapter.transaction(async (tx) => {
        await q(tx, f.adapter.dialect, 'INSERT INTO items (id, name) VALUES (?, ?)', [1, 'one']);
        await q(tx, f.adapter.dialect, 'INSERT INTO items (id, name) VALUES (?, ?)', [2, 'two']);
        return (await q(tx, f.adapter.dialect, 'SELECT count(*) AS n FROM items')).rows[0]?.['n'];
      });
      expect(result).toBe(Number(before) + 2);
      expect(await count()).toBe(result);
    });

    it('rolls back and rethrows the same error when the callback throws', async () => {
      const before = await count();
      const boom = new Error('boom');
      const e = await rejection(
        f.adapter.transaction(async (tx) => {
          await q(tx, f.adapter.dialect, 'INSERT INTO items (id, name) VALUES (?, ?)', [3, 'three']);
          throw boom;
        }),
      );
      expect(e).toBe(boom);
      expect(await count()).toBe(before);
    });

    it('rolls back on a failed statement and leaves the pool usable for 20 more queries', async () => {
      const before = await count();
      const e = await rejection(
        f.adapter.transaction(async (tx) => {
          await q(tx, f.adapter.dialect, 'INSERT INTO items (id, name) VALUES (?, ?)', [4, 'four']);
          await q(tx, f.adapter.dialect, 'INSERT INTO items (id, name) VALUES (?, ?)', [5, 'one']);
        }),
      );
      expect(e).toBeInstanceOf(RestError);
      expect((e as RestError).code).toBe('unique_violation');
      expect(await count()).toBe(before);
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => q(f.adapter, f.adapter.dialect, 'SELECT ? AS i', [i])),
      );
      expect(results.map((r) => Number(r.rows[0]?.['i']))).toStrictEqual(
        Array.from({ length: 20 }, (_, i) => i),
      );
      // Each pooled connection is outside any transaction: a write through it is visible at once.
      for (let i = 0; i < 4; i++) {
        await f.adapter.transaction((tx) => q(tx, f.adapter.dialect, 'SELECT 1 AS one'));
      }
      await q(f.adapter, f.adapter.dialect, 'INSERT INTO items (id, name) VALUES (?, ?)', [6, 'six']);
      expect(await count()).toBe(Number(before) + 1);
    });

    it('does not let a statement of another request run inside an open transaction', async () => {
      await q(f.adapter, f.adapter.dialect, 'DELETE FROM items');
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const tx = f.adapter.transaction(async (t) => {
        await q(t, f.adapter.dialect, 'INSERT INTO items (id, name) VALUES (?, ?)', [10, 'ten']);
        await gate;
        throw new Error('abandon');
      });
      await new Promise((resolve) => setTimeout(resolve, 20));
      const outside = q(f.adapter, f.adapter.dialect, 'SELECT count(*) AS n FROM items');
      release();
      await expect(tx).rejects.toThrow('abandon');
      expect((await outside).rows[0]?.['n']).toBe(0);
    });
  });

  describe.skipIf(!available)(skipReason(kind) ?? 'introspection', () => {
    beforeAll(async () => {
      await f.adapter.exec(
        `CREATE TABLE pairs (a integer NOT NULL, b varchar(10) NOT NULL, note text DEFAULT 'x', PRIMARY KEY (b, a))`,
      );
      await f.adapter.exec('CREATE TABLE nokey (n integer)');
      await f.adapter.exec('CREATE VIEW items_view AS SELECT id FROM items');
    });

    it('lists base tables of the current schema with their primary keys in key order', async () => {
      const { tables } = await f.adapter.introspect();
      expect([...tables.keys()].sort()).toStrictEqual(['items', 'nokey', 'pairs', 'types', 'zoned']);
      expect(tables.get('pairs')?.primaryKey).toStrictEqual(['b', 'a']);
      expect(tables.get('types')?.primaryKey).toStrictEqual(['id']);
      expect(tables.get('nokey')?.primaryKey).toStrictEqual([]);
    });

    it('describes columns in order with type, nullability, default and auto-increment', async () => {
      const { tables } = await f.adapter.introspect();
      const pairs = tables.get('pairs');
      expect(
        pairs?.columns.map((c) => [c.name, c.type, c.nullable, c.hasDefault, c.autoIncrement]),
      ).toStrictEqual([
        ['a', 'integer', false, false, false],
        ['b', 'text', false, false, false],
        ['note', 'text', true, true, false],
      ]);
      expect(pairs?.columnsByName.get('note')?.dbType).toBe('text');
      const types = tables.get('types');
      const summary = Object.fromEntries(types?.columns.map((c) => [c.name, c.type]) ?? []);
      expect(summary).toStrictEqual({
        id: 'integer',
        i: 'integer',
        big: 'integer',
        d: 'decimal',
        f: 'decimal',
        r: 'decimal',
        b: 'boolean',
        j: 'other',
        js: 'other',
        dt: 'other',
        ts: 'other',
        tz: 'other',
        s: 'text',
        v: 'text',
      });
      const id = types?.columnsByName.get('id');
      expect([id?.nullable, id?.hasDefault, id?.autoIncrement]).toStrictEqual([false, true, true]);
      expect(types?.columnsByName.get('j')?.dbType).toMatch(/^jsonb?$/);
      expect(types?.columnsByName.get('dt')?.dbType).toMatch(/^date$/);
      expect(types?.columnsByName.get('ts')?.dbType).toMatch(/^(timestamp|datetime)\b/);
    });

    it('changes the schema version after CREATE TABLE and ALTER TABLE, and only then', async () => {
      const v0 = await f.adapter.schemaVersion();
      expect(await f.adapter.schemaVersion()).toBe(v0);
      await q(f.adapter, f.adapter.dialect, 'INSERT INTO nokey (n) VALUES (?)', [1]);
      expect(await f.adapter.schemaVersion()).toBe(v0);
      await f.adapter.exec('CREATE TABLE later (id integer PRIMARY KEY)');
      const v1 = await f.adapter.schemaVersion();
      expect(v1).not.toBe(v0);
      await f.adapter.exec('ALTER TABLE later ADD COLUMN extra integer');
      const v2 = await f.adapter.schemaVersion();
      expect(v2).not.toBe(v1);
      expect((await f.adapter.introspect()).tables.get('later')?.columns.map((c) => c.name)).toStrictEqual([
        'id',
        'extra',
      ]);
    });

    it('lets the schema cache find a table created after it started, without a restart', async () => {
      let now = 0;
      const cache = createSchemaCache(f.adapter, { checkIntervalMs: 1000, clock: () => now });
      expect(await cache.table('newcomer')).toBeUndefined();
      await f.adapter.exec('CREATE TABLE newcomer (id integer PRIMARY KEY, label text)');
      expect(await cache.table('newcomer')).toBeUndefined();
      now += 1000;
      expect((await cache.table('newcomer'))?.columns.map((c) => c.name)).toStrictEqual(['id', 'label']);
      await f.adapter.exec('ALTER TABLE newcomer ADD COLUMN more integer');
      now += 1000;
      expect((await cache.get()).tables.get('newcomer')?.columns.map((c) => c.name)).toStrictEqual([
        'id',
        'label',
        'more',
      ]);
    });
  });
});
