// SQL injection attempts through table names, column names (filters, select, order, body keys)
// and values: names are refused unless the schema has them; values are stored verbatim.

import { beforeEach, expect, it } from 'vitest';
import type { DialectName } from '../../../compiler/types.js';
import { quoteIdent } from '../../support/server.js';
import { expectError, forEachDatabase, ids, seedItems } from './matrix.js';

const PAYLOADS = [
  'items; DROP TABLE items; --',
  "items' OR '1'='1",
  'items" WHERE 1=1 --',
  'items` WHERE 1=1 #',
  '(SELECT * FROM items)',
  'items/**/UNION/**/SELECT/**/1',
];

const e = encodeURIComponent;

forEachDatabase('SQL injection', (ctx) => {
  beforeEach(() => seedItems(ctx()));

  async function intact(): Promise<void> {
    expect(await ctx().sql.count('items')).toBe(5);
    expect(await ctx().sql.count('tags')).toBeGreaterThanOrEqual(0);
  }

  it.each(PAYLOADS)('through the table name %j: 404, nothing touched', async (payload) => {
    expectError(await ctx().http.get(`/${e(payload)}`), 404, 'unknown_table');
    expectError(await ctx().http.delete(`/${e(payload)}?id=gt.0`), 404, 'unknown_table');
    expectError(await ctx().http.post(`/${e(payload)}`, { title: 'x' }), 404, 'unknown_table');
    await intact();
  });

  it.each(PAYLOADS.map((p) => p.replace('items', 'id')))(
    'through column names %j: 400 everywhere',
    async (payload) => {
      expectError(await ctx().http.get(`/items?${e(payload)}=eq.1`), 400, 'unknown_column');
      expectError(await ctx().http.get(`/items?select=${e(payload)}`), 400, 'unknown_column');
      expectError(await ctx().http.get(`/items?order=${e(payload)}`), 400, 'unknown_column');
      expectError(await ctx().http.delete(`/items?${e(payload)}=eq.1`), 400, 'unknown_column');
      expectError(await ctx().http.post('/items', { title: 'x', [payload]: 1 }), 400, 'unknown_column');
      expectError(await ctx().http.patch('/items/1', { [payload]: 1 }), 400, 'unknown_column');
      await intact();
    },
  );

  it.each([
    "' OR '1'='1",
    "apple' --",
    'apple"; DROP TABLE items; --',
    '1); DELETE FROM items; --',
    '\\',
    "'; SELECT pg_sleep(5); --",
    '%',
  ])('through values %j: bound, matched literally, stored verbatim', async (value) => {
    const filtered = await ctx().http.get(`/items?title=eq.${e(value)}`);
    expect([filtered.status, filtered.json]).toEqual([200, []]);
    expect(
      (
        await ctx().http.get(
          `/items?title=in.(${e(`"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`)})`,
        )
      ).json,
    ).toEqual([]);
    expect((await ctx().http.get(`/items?title=like.${e(value)}`)).json).toEqual([]);
    const created = await ctx().http.post('/items', { title: value, note: value });
    expect(created.status).toBe(201);
    const id = (created.json as { id: number }).id;
    expect((await ctx().http.get(`/items?title=eq.${e(value)}&select=id,title,note`)).json).toEqual([
      { id, title: value, note: value },
    ]);
    expect(await ctx().sql.count('items')).toBe(6);
  });

  it('refuses NUL in text values on every database (PostgreSQL cannot store it)', async () => {
    expectError(await ctx().http.get(`/items?title=eq.${e('a\u0000b')}`), 400, 'invalid_value', {
      column: 'title',
    });
    expectError(await ctx().http.post('/items', { title: 'a\u0000b' }), 400, 'invalid_value', {
      column: 'title',
    });
    await intact();
  });

  it('numbers and booleans only reach SQL as bound values', async () => {
    expectError(await ctx().http.get(`/items?id=eq.${e('1 OR 1=1')}`), 400, 'invalid_value');
    expectError(await ctx().http.get(`/items?page_size=${e('1; DROP TABLE items')}`), 400, 'invalid_page');
    expectError(await ctx().http.get(`/items/${e('1 OR 1=1')}`), 400, 'invalid_value');
    expectError(
      await ctx().http.delete(`/items?done=is.${e('true; DROP TABLE items')}`),
      400,
      'invalid_filter',
    );
    expectError(
      await ctx().http.get(`/items?order=${e('id.desc; DROP TABLE items')}`),
      400,
      'unknown_column',
    );
    await intact();
  });

  it('serves names that need quoting through the dialect, exactly', async () => {
    const kind: DialectName = ctx().kind;
    const table = quoteIdent(kind, 'we"ird');
    await ctx().sql.exec(`DELETE FROM ${table}`);
    await ctx().sql.exec(
      `INSERT INTO ${table} (${quoteIdent(kind, 'sp ace')}, ${quoteIdent(kind, 'a"b')}) VALUES (1, 'x'), (2, 'y')`,
    );
    const base = `/${e('we"ird')}`;
    expect((await ctx().http.get(`${base}?select=${e('a"b')}&${e('sp ace')}=gt.1`)).json).toEqual([
      { 'a"b': 'y' },
    ]);
    expect((await ctx().http.get(`${base}/2`)).json).toEqual({ 'sp ace': 2, 'a"b': 'y' });
    expect((await ctx().http.post(base, { 'sp ace': 3, 'a"b': 'z' })).status).toBe(201);
    expect((await ctx().http.get(`${base}?order=${e('sp ace')}.desc&page_size=1`)).json).toEqual([
      { 'sp ace': 3, 'a"b': 'z' },
    ]);
    expectError(await ctx().http.get(`/${e('we"ird" --')}`), 404, 'unknown_table');
    expectError(await ctx().http.get(`/${e('WE"IRD')}`), 404, 'unknown_table');
  });

  it('does not let % or _ in a like value act as wildcards', async () => {
    expect(ids(await ctx().http.get(`/items?note=like.${e('has 50% off_sale')}`))).toEqual([3]);
    expect(ids(await ctx().http.get(`/items?note=like.${e('has 5_% off%sale')}`))).toEqual([]);
    expect(ids(await ctx().http.get(`/items?title=ilike.${e('_pple')}`))).toEqual([]);
  });
});
