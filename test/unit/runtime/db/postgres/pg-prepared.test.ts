// Prepared statements on PostgreSQL: named per text, bounded per connection, and connections
// prepared before a column changed type retired — checked on a real server.

import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DbAdapter } from '../../../../../runtime/db/adapter.js';
import { createPgAdapter } from '../../../../../runtime/db/postgres/pg-adapter.js';
import { createPreparedStatements } from '../../../../../runtime/db/postgres/pg-prepared.js';
import { createTestDatabase, withPg, type TestDatabase } from '../../../../support/databases.js';

const sql = (text: string, values: readonly unknown[] = []) => ({ text, values });
const client = (): pg.ClientBase => ({}) as pg.ClientBase;

describe('prepared statement names', () => {
  it('names each text, at most `capacity` per connection; further texts run unnamed', () => {
    const prepared = createPreparedStatements(2);
    const c = client();
    const a = prepared.queryFor(c, sql('SELECT 1'));
    const b = prepared.queryFor(c, sql('SELECT 2'));
    expect(a.name).toMatch(/^rest_[0-9a-f]{10}_1_[A-Za-z0-9_-]{27}$/);
    expect(a.name?.length).toBeLessThan(64);
    expect(b.name).not.toBe(a.name);
    expect(prepared.queryFor(c, sql('SELECT 3')).name).toBeUndefined();
    expect(prepared.queryFor(c, sql('SELECT 1')).name).toBe(a.name);
    const other = prepared.queryFor(client(), sql('SELECT 1')).name;
    expect(other).toBeDefined();
    expect(other).not.toBe(a.name);
  });

  it('binds the values as parameters, never into the text', () => {
    const query = createPreparedStatements().queryFor(client(), sql('SELECT $1::int', [7]));
    expect(query).toMatchObject({ text: 'SELECT $1::int', values: [7] });
  });

  it('retires the connections prepared before an invalidation, and only those', () => {
    const prepared = createPreparedStatements();
    const old = client();
    prepared.queryFor(old, sql('SELECT 1'));
    expect(prepared.isStale(old)).toBe(false);
    prepared.invalidate();
    expect(prepared.isStale(old)).toBe(true);
    expect(prepared.queryFor(old, sql('SELECT 1')).name).toBeUndefined();
    const fresh = client();
    expect(prepared.queryFor(fresh, sql('SELECT 1')).name).toBeDefined();
    expect(prepared.isStale(fresh)).toBe(false);
  });
});

describe(`prepared statements on PostgreSQL (postgres)`, () => {
  let db: TestDatabase;
  let adapter: DbAdapter;
  const admin = <T>(fn: (c: pg.Client) => Promise<T>): Promise<T> => withPg(db.url, fn);
  const preparedOnConnection = async (): Promise<string[]> =>
    (
      await adapter.query(
        sql("SELECT statement FROM pg_prepared_statements WHERE name LIKE 'rest\\_%' ORDER BY statement"),
      )
    ).rows.map((r) => String(r['statement']));

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    await admin((c) =>
      c.query('CREATE TABLE t (id integer PRIMARY KEY, a integer); INSERT INTO t VALUES (1, 7)'),
    );
    // One connection, so every query below meets the statements the previous ones prepared.
    adapter = await createPgAdapter(db.url, { poolSize: 1 });
    await adapter.introspect();
  });
  afterAll(async () => {
    await adapter?.close();
    await db?.drop();
  });

  it('prepares a statement once on the connection and reuses it', async () => {
    const read = sql('SELECT a FROM t WHERE id = $1', [1]);
    expect((await adapter.query(read)).rows).toEqual([{ a: 7 }]);
    expect((await adapter.query(read)).rows).toEqual([{ a: 7 }]);
    expect(await preparedOnConnection()).toContain('SELECT a FROM t WHERE id = $1');
  });

  it('answers 503 schema_changed once when a column changed type under a prepared statement, then serves the new type', async () => {
    const read = sql('SELECT a FROM t WHERE id = $1', [1]);
    await adapter.query(read);
    await admin((c) => c.query('ALTER TABLE t ALTER COLUMN a TYPE text'));
    await expect(adapter.query(read)).rejects.toMatchObject({ status: 503, code: 'schema_changed' });
    expect((await adapter.query(read)).rows).toEqual([{ a: '7' }]);
  });

  it('retires prepared connections when introspection sees a column change, so no request fails', async () => {
    const read = sql('SELECT a FROM t WHERE id = $1', [1]);
    await adapter.query(read);
    await admin((c) => c.query('ALTER TABLE t ALTER COLUMN a TYPE bigint USING a::bigint'));
    await adapter.introspect();
    expect((await adapter.query(read)).rows).toEqual([{ a: 7 }]);
    expect((await adapter.query(read)).rows).toEqual([{ a: 7 }]);
  });
});
