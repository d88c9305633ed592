// What the API returns finds its row again, on every database: timestamps stored in any of the
// text forms a database may hold (SQLite keeps the text written: `2021-01-01 00:00:00`,
// `2021-01-01T00:00:00`, minutes only, with a zone) come back in one form, the same on all three,
// and that value sent back in eq, neq, ranges and in finds exactly the rows it should. A text
// longer than its column's declared length is 400 invalid_value on every database, SQLite too.

import { beforeAll, beforeEach, expect, it } from 'vitest';
import type { DialectName } from '../../../compiler/types.js';
import { expectError, forEachDatabase, ids, type MatrixContext } from './matrix.js';

const DDL: Readonly<Record<DialectName, string>> = {
  postgres:
    'CREATE TABLE invoice (id integer PRIMARY KEY, invoice_date timestamp, paid_at timestamptz, code varchar(40))',
  mysql:
    'CREATE TABLE invoice (id int PRIMARY KEY, invoice_date datetime(3), paid_at timestamp(3) NULL, code varchar(40))',
  sqlite:
    'CREATE TABLE invoice (id INTEGER PRIMARY KEY, invoice_date timestamp, paid_at timestamp, code varchar(40))',
};

/** The local timestamps as each database's own SQL writes them (SQLite keeps the text as is). */
const LOCAL_ROWS: ReadonlyArray<readonly [number, string, string]> = [
  // [id, the text written in SQL, what the API answers on every database]
  [1, '2021-01-01 00:00:00', '2021-01-01T00:00:00'],
  [2, '2021-01-01 00:00:01', '2021-01-01T00:00:01'],
  // After row 2 as text (`T` > ` `), before it in time.
  [3, '2021-01-01T00:00:00.5', '2021-01-01T00:00:00.5'],
  [4, '2021-01-02 10:30', '2021-01-02T10:30:00'],
  [5, '2021-01-03 05:06:07.250', '2021-01-03T05:06:07.25'],
];

/** Zoned instants (SQLite's text with an offset; PostgreSQL timestamptz; MySQL TIMESTAMP in UTC). */
const ZONED_SQL: Readonly<Record<DialectName, readonly string[]>> = {
  postgres: ['2021-01-01 02:00:00+02', '2021-01-01 00:00:01+00'],
  mysql: ['2021-01-01 00:00:00', '2021-01-01 00:00:01'],
  sqlite: ['2021-01-01 02:00:00+02:00', '2021-01-01T00:00:01Z'],
};

async function reset(c: MatrixContext): Promise<void> {
  await c.sql.exec('DELETE FROM invoice');
  const zoned = ZONED_SQL[c.kind];
  const values = LOCAL_ROWS.map(
    ([id, text], i) => `(${id}, '${text}', ${zoned[i] === undefined ? 'NULL' : `'${zoned[i]}'`}, 'c${id}')`,
  );
  // MySQL's TIMESTAMP reads its text in the session's zone: UTC, as the server's own sessions.
  if (c.kind === 'mysql') await c.sql.exec("SET time_zone = '+00:00'");
  await c.sql.exec(`INSERT INTO invoice (id, invoice_date, paid_at, code) VALUES ${values.join(', ')}`);
}

forEachDatabase('values the API returns find their rows', (ctx) => {
  beforeAll(async () => {
    await ctx().sql.exec(DDL[ctx().kind]);
    // The server sees a new table at its next schema check (at most a second away).
    for (let i = 0; i < 50 && (await ctx().http.get('/invoice')).status !== 200; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });
  beforeEach(async () => {
    await reset(ctx());
  });

  const get = async (path: string): Promise<unknown> => {
    const reply = await ctx().http.get(path);
    expect(reply.status, reply.text).toBe(200);
    return reply.json;
  };
  const idsOf = async (query: string): Promise<unknown[]> => {
    const reply = await ctx().http.get(`/invoice?${query}&order=id`);
    expect(reply.status, reply.text).toBe(200);
    return ids(reply);
  };

  it('answers a timestamp in one text form, the same on every database', async () => {
    for (const [id, , answered] of LOCAL_ROWS) {
      expect(await get(`/invoice/${id}`)).toMatchObject({ id, invoice_date: answered });
    }
    expect(await get('/invoice/1')).toMatchObject({ paid_at: '2021-01-01T00:00:00Z' });
  });

  it('orders timestamps by time, whatever text form they are held in', async () => {
    expect(ids(await ctx().http.get('/invoice?order=invoice_date'))).toEqual([1, 3, 2, 4, 5]);
    expect(ids(await ctx().http.get('/invoice?order=invoice_date.desc'))).toEqual([5, 4, 2, 3, 1]);
  });

  it('finds each row again by the timestamp it answered: eq, neq, in and ranges', async () => {
    const rows = (await get('/invoice?order=invoice_date')) as Array<{ id: number; invoice_date: string }>;
    const sorted = (list: number[]): number[] => [...list].sort((a, b) => a - b);
    for (const [i, row] of rows.entries()) {
      const v = encodeURIComponent(row.invoice_date);
      const before = sorted(rows.slice(0, i).map((r) => r.id));
      const after = sorted(rows.slice(i + 1).map((r) => r.id));
      expect([row.invoice_date, await idsOf(`invoice_date=eq.${v}`)]).toEqual([row.invoice_date, [row.id]]);
      expect(await idsOf(`invoice_date=neq.${v}`)).toEqual(sorted([...before, ...after]));
      expect(await idsOf(`invoice_date=gt.${v}`)).toEqual(after);
      expect(await idsOf(`invoice_date=gte.${v}`)).toEqual(sorted([row.id, ...after]));
      expect(await idsOf(`invoice_date=lt.${v}`)).toEqual(before);
      expect(await idsOf(`invoice_date=lte.${v}`)).toEqual(sorted([...before, row.id]));
      expect(await idsOf(`invoice_date=in.(${v})`)).toEqual([row.id]);
    }
    // Another spelling of the same instant finds it too.
    expect(await idsOf('invoice_date=eq.2021-01-01%2000:00:00')).toEqual([1]);
    expect(await idsOf('invoice_date=eq.2021-01-02T10:30')).toEqual([4]);
    expect((await get('/invoice?invoice_date=lt.2021-01-02&count')) as unknown).toEqual({ count: 3 });
  });

  it('finds a zoned timestamp again by the UTC value it answered', async () => {
    const rows = (await get('/invoice?id=lte.2&order=id')) as Array<{
      id: number;
      paid_at: string;
    }>;
    expect(rows.map((r) => [r.id, r.paid_at])).toEqual([
      [1, '2021-01-01T00:00:00Z'],
      [2, '2021-01-01T00:00:01Z'],
    ]);
    for (const row of rows) {
      expect(await idsOf(`paid_at=eq.${encodeURIComponent(row.paid_at)}`)).toEqual([row.id]);
    }
    expect(await idsOf(`paid_at=gt.${encodeURIComponent('2021-01-01T00:00:00Z')}`)).toEqual([2]);
  });

  it('finds a row written through the API by the value it answered', async () => {
    const created = await ctx().http.post('/invoice', { id: 10, invoice_date: '2021-02-03 04:05:06' });
    expect(created.status, created.text).toBe(201);
    const answered = (created.json as { invoice_date: string }).invoice_date;
    expect(answered).toBe('2021-02-03T04:05:06');
    expect(await idsOf(`invoice_date=eq.${answered}`)).toEqual([10]);
    expect(ids(await ctx().http.get(`/invoice?invoice_date=gte.${answered}`))).toEqual([10]);
  });

  it('refuses a text longer than its declared length (400 invalid_value), nothing written', async () => {
    const long = 'x'.repeat(41);
    expectError(await ctx().http.post('/invoice', { id: 20, code: long }), 400, 'invalid_value', {
      column: 'code',
    });
    expectError(await ctx().http.patch('/invoice/1', { code: long }), 400, 'invalid_value', {
      column: 'code',
    });
    expectError(
      await ctx().http.post('/invoice', [
        { id: 21, code: 'fits' },
        { id: 22, code: long },
      ]),
      400,
      'invalid_value',
    );
    expect(await ctx().sql.count('invoice')).toBe(LOCAL_ROWS.length);
    expect(await get('/invoice/1')).toMatchObject({ code: 'c1' });
    // 40 characters fit, counted as characters (code points), not bytes or UTF-16 units.
    const emoji = '😀'.repeat(40);
    const fits = await ctx().http.post('/invoice', [
      { id: 23, code: 'y'.repeat(40) },
      { id: 24, code: emoji },
    ]);
    expect(fits.status, fits.text).toBe(201);
    expect(await get('/invoice/24')).toMatchObject({ code: emoji });
    // A filter value is not a stored value: a longer one just finds nothing.
    expect(await idsOf(`code=eq.${long}`)).toEqual([]);
  });
});
