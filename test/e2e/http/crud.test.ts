// Every table endpoint and parameter of docs/http-api.md through real HTTP, on every database, checking
// status, body and what the database holds afterwards.

import { beforeEach, expect, it } from 'vitest';
import { expectError, forEachDatabase, ids, seedItems } from './matrix.js';

forEachDatabase('table CRUD', (ctx) => {
  beforeEach(() => seedItems(ctx()));

  it('GET / is the health check with the database kind and auth off, said in words', async () => {
    const r = await ctx().http.get('/');
    expect([r.status, r.json]).toEqual([
      200,
      {
        status: 'ok',
        database: ctx().kind,
        auth: false,
        warning:
          'auth is off: every table is public, readable and writable by anyone; set -auth.secret (REST_AUTH_SECRET) to protect it',
      },
    ]);
    expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    expect(r.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('lists rows ordered by primary key, 100 per page by default', async () => {
    const r = await ctx().http.get('/items');
    expect(r.status).toBe(200);
    expect(ids(r)).toEqual([1, 2, 3, 4, 5]);
    expect((r.json as unknown[])[0]).toEqual({
      id: 1,
      title: 'apple',
      qty: 5,
      price: 1.5,
      done: true,
      meta: { color: 'red' },
      due: '2024-01-15',
      created_at: null,
      note: 'Fresh',
    });
    const values = Array.from({ length: 120 }, (_, i) => `('bulk ${i}')`).join(', ');
    await ctx().sql.exec(`INSERT INTO items (title) VALUES ${values}`);
    const page1 = await ctx().http.get('/items');
    expect((page1.json as unknown[]).length).toBe(100);
    const page2 = await ctx().http.get('/items?page=2');
    expect((page2.json as unknown[]).length).toBe(25);
  });

  it('reads one row by primary key, 404 when absent, 400 for a key of the wrong type', async () => {
    const r = await ctx().http.get('/items/2');
    expect([r.status, (r.json as { title: string }).title]).toEqual([200, 'Banana']);
    expectError(await ctx().http.get('/items/999'), 404, 'not_found');
    expectError(await ctx().http.get('/items/abc'), 400, 'invalid_value', { column: 'id' });
    const selected = await ctx().http.get('/items/1?select=title,qty');
    expect(selected.json).toEqual({ title: 'apple', qty: 5 });
  });

  it('addresses a text primary key exactly (case, trailing space) on every database', async () => {
    await ctx().sql.exec("INSERT INTO tags (name, weight) VALUES ('abc', 1), ('a b', 2)");
    expect((await ctx().http.get('/tags/abc')).json).toEqual({ name: 'abc', weight: 1 });
    expect((await ctx().http.get('/tags/a%20b')).json).toEqual({ name: 'a b', weight: 2 });
    expectError(await ctx().http.get('/tags/ABC'), 404, 'not_found');
    expectError(await ctx().http.get('/tags/abc%20'), 404, 'not_found');
  });

  it('refuses /<key> on a composite or missing primary key but serves filters', async () => {
    await ctx().sql.exec("INSERT INTO pairs (a, b, label) VALUES (1, 2, 'x'), (1, 3, 'y')");
    expectError(await ctx().http.get('/pairs/1'), 400, 'unsupported_key');
    expectError(await ctx().http.delete('/logs/1'), 400, 'unsupported_key');
    const r = await ctx().http.get('/pairs?a=eq.1&b=eq.3');
    expect(r.json).toEqual([{ a: 1, b: 3, label: 'y' }]);
  });

  it('counts rows after filters', async () => {
    expect((await ctx().http.get('/items?count')).json).toEqual({ count: 5 });
    expect((await ctx().http.get('/items?count&done=is.true')).json).toEqual({ count: 2 });
    expect((await ctx().http.get('/items?count=&qty=gt.100')).json).toEqual({ count: 0 });
  });

  it.each([
    ['qty=eq.5', [1]],
    ['qty=neq.5', [2, 4, 5]],
    ['qty=gt.0', [1, 2]],
    ['qty=gte.0', [1, 2, 4]],
    ['qty=lt.5', [4, 5]],
    ['qty=lte.5', [1, 4, 5]],
    ['price=gt.1.5', [3, 5]],
    ['price=eq.0.25', [2]],
    ['title=eq.apple', [1]],
    ['title=eq.Apple', []],
    ['title=eq.apple%20', []],
    ['title=neq.apple', [2, 3, 4, 5]],
    ['title=like.*an*', [2, 5]],
    ['title=like.*AN*', []],
    ['title=ilike.*AN*', [2, 5]],
    ['title=like.%25', []],
    ['note=like.*50%25*', [3]],
    ['note=like.*_*', [3]],
    ['note=ilike.fresh', [1]],
    ['title=like.cherry?pie', []],
    ['title=in.(apple,date,nope)', [1, 4]],
    ['title=in.(APPLE)', []],
    ['qty=in.(0,12)', [2, 4]],
    ['qty=in.()', []],
    ['qty=is.null', [3]],
    ['note=is.null', [2]],
    ['done=is.true', [1, 4]],
    ['done=is.false', [2, 3, 5]],
    ['done=eq.true', [1, 4]],
    ['meta=is.null', [2, 3, 5]],
    ['due=gt.2024-01-01', [1, 3]],
    ['due=eq.2023-12-31', [5]],
    ['qty=gt.0&qty=lt.10', [1]],
    ['qty=gte.0&done=is.true&title=neq.date', [1]],
  ])('filters %s', async (query, expected) => {
    const r = await ctx().http.get(`/items?${query}`);
    expect(r.status).toBe(200);
    expect(ids(r)).toEqual(expected);
  });

  it('selects columns', async () => {
    const r = await ctx().http.get('/items?select=id,title&id=lte.2');
    expect(r.json).toEqual([
      { id: 1, title: 'apple' },
      { id: 2, title: 'Banana' },
    ]);
  });

  it.each([
    ['qty.desc', [3, 2, 1, 4, 5]],
    ['qty', [5, 4, 1, 2, 3]],
    ['qty.asc.nullsfirst', [3, 5, 4, 1, 2]],
    ['qty.desc.nullslast', [2, 1, 4, 5, 3]],
    ['qty.desc.nullsfirst', [3, 2, 1, 4, 5]],
    ['done.desc,id.desc', [4, 1, 5, 3, 2]],
    ['price.asc', [2, 1, 3, 5, 4]],
  ])('orders by %s (NULLs last ascending, first descending, by default)', async (order, expected) => {
    const r = await ctx().http.get(`/items?order=${order}`);
    expect(ids(r)).toEqual(expected);
  });

  it('pages with page and page_size', async () => {
    expect(ids(await ctx().http.get('/items?page_size=2'))).toEqual([1, 2]);
    expect(ids(await ctx().http.get('/items?page_size=2&page=3'))).toEqual([5]);
    expect(ids(await ctx().http.get('/items?page_size=2&page=4'))).toEqual([]);
    expect(ids(await ctx().http.get('/items?page_size=1000'))).toEqual([1, 2, 3, 4, 5]);
  });

  it.each([
    ['page=0', 'invalid_page'],
    ['page=-1', 'invalid_page'],
    ['page=x', 'invalid_page'],
    ['page_size=0', 'invalid_page'],
    ['page_size=1001', 'invalid_page'],
    ['qty=between.1', 'invalid_filter'],
    ['qty=5', 'invalid_filter'],
    ['qty=like.5*', 'invalid_filter'],
    ['qty=eq.five', 'invalid_value'],
    ['done=eq.yes', 'invalid_value'],
    ['due=eq.2024-13-01', 'invalid_value'],
    ['meta=eq.{}', 'invalid_filter'],
    ['nope=eq.1', 'unknown_column'],
    ['select=id,nope', 'unknown_column'],
    ['order=nope.desc', 'unknown_column'],
    ['order=.desc', 'invalid_order'],
    ['select=', 'invalid_select'],
    ['count&order=id', 'invalid_parameter'],
  ])('rejects ?%s with 400 %s', async (query, code) => {
    expectError(await ctx().http.get(`/items?${query}`), 400, code);
  });

  it('marks ?mine as read_mine and, with auth disabled, answers like a read', async () => {
    expect(ids(await ctx().http.get('/items?mine&done=is.true'))).toEqual([1, 4]);
    expect((await ctx().http.get('/items/1?mine')).status).toBe(200);
  });

  it('answers 404 for an unknown table and an unknown path', async () => {
    expectError(await ctx().http.get('/nope'), 404, 'unknown_table', { table: 'nope' });
    expectError(await ctx().http.post('/nope', { a: 1 }), 404, 'unknown_table');
    expectError(await ctx().http.get('/items/1/2'), 404, 'not_found');
  });

  it('answers 405 with Allow for other methods', async () => {
    const r = await ctx().http.post('/items/1', { title: 'x' });
    expectError(r, 405, 'method_not_allowed');
    expect(r.headers.get('allow')).toBe('GET, HEAD, PUT, PATCH, DELETE');
    expectError(await ctx().http.call('OPTIONS', '/items'), 405, 'method_not_allowed');
    expectError(await ctx().http.delete('/'), 405, 'method_not_allowed');
    expect(await ctx().sql.count('items')).toBe(5);
  });

  it('creates one row and returns it as stored, defaults included', async () => {
    const r = await ctx().http.post('/items', { title: 'fig', qty: 3, price: '2.5' });
    expect(r.status).toBe(201);
    expect(r.json).toEqual({
      id: 101,
      title: 'fig',
      qty: 3,
      price: 2.5,
      done: false,
      meta: null,
      due: null,
      created_at: null,
      note: null,
    });
    expect(await ctx().sql.rows('SELECT title, qty FROM items WHERE id = 101')).toEqual([
      { title: 'fig', qty: 3 },
    ]);
  });

  it('creates many rows from an array, in order, returning the selected columns', async () => {
    const r = await ctx().http.post('/items?select=id,title', [
      { title: 'g1' },
      { title: 'g2', done: true },
      { title: 'g3' },
    ]);
    expect([r.status, r.json]).toEqual([
      201,
      [
        { id: 101, title: 'g1' },
        { id: 102, title: 'g2' },
        { id: 103, title: 'g3' },
      ],
    ]);
    expect((await ctx().http.post('/items', [])).json).toEqual([]);
    expect(await ctx().sql.count('items')).toBe(8);
  });

  it('creates a row with every column defaulted and reads back a row without primary key', async () => {
    await ctx().sql.exec('DELETE FROM logs');
    expect((await ctx().http.post('/logs', { msg: 'hello' })).json).toEqual({ msg: 'hello' });
    expect((await ctx().http.post('/logs', {})).status).toBe(201);
    expect(await ctx().sql.count('logs')).toBe(2);
  });

  it('creates an array all-or-nothing: one bad row writes nothing', async () => {
    expectError(
      await ctx().http.post('/items', [{ title: 'ok1' }, { title: 'apple' }, { title: 'ok2' }]),
      409,
      'unique_violation',
    );
    expectError(await ctx().http.post('/items', [{ title: 'ok1' }, { qty: 1 }]), 400, 'not_null_violation');
    expectError(
      await ctx().http.post('/items', [{ title: 'ok1' }, { title: 'ok2', qty: 'x' }]),
      400,
      'invalid_value',
      { column: 'qty' },
    );
    expectError(
      await ctx().http.post('/items', [{ title: 'ok1' }, { title: 'ok2', nope: 1 }]),
      400,
      'unknown_column',
    );
    expect(await ctx().sql.count('items')).toBe(5);
  });

  it.each([
    ['an unknown column', { title: 'x', nope: 1 }, 400, 'unknown_column'],
    ['a string for an integer', { title: 'x', qty: 'many' }, 400, 'invalid_value'],
    ['a float for an integer', { title: 'x', qty: 1.5 }, 400, 'invalid_value'],
    ['a number for a boolean', { title: 'x', done: 1 }, 400, 'invalid_value'],
    ['a number for text', { title: 7 }, 400, 'invalid_value'],
    ['an object for text', { title: { a: 1 } }, 400, 'invalid_value'],
    ['a bad date', { title: 'x', due: '2023-02-29' }, 400, 'invalid_value'],
    ['a missing NOT NULL column', { qty: 1 }, 400, 'not_null_violation'],
    ['NULL for a NOT NULL column', { title: null }, 400, 'not_null_violation'],
    ['a duplicate unique value', { title: 'apple' }, 409, 'unique_violation'],
    ['a duplicate primary key', { id: 1, title: 'x' }, 409, 'unique_violation'],
    ['a scalar body', 5, 400, 'invalid_body'],
    ['an array of scalars', [1, 2], 400, 'invalid_body'],
  ])('refuses a create with %s and writes nothing', async (_name, body, status, code) => {
    expectError(await ctx().http.post('/items', body), status, code);
    expect(await ctx().sql.count('items')).toBe(5);
  });

  it('needs Content-Type: application/json for writes (415) and valid JSON (400)', async () => {
    const http = ctx().http;
    expectError(await http.call('POST', '/items', { body: '{"title":"x"}' }), 415, 'unsupported_media_type');
    expectError(
      await http.call('POST', '/items', { body: '{"title":"x"}', headers: { 'content-type': 'text/plain' } }),
      415,
      'unsupported_media_type',
    );
    expectError(
      await http.call('PATCH', '/items/1', {
        body: '{"qty":1}',
        headers: { 'content-type': 'application/xml' },
      }),
      415,
      'unsupported_media_type',
    );
    expect(
      (
        await http.call('POST', '/items', {
          body: '{"title":"cs"}',
          headers: { 'content-type': 'application/json; charset=UTF-8' },
        })
      ).status,
    ).toBe(201);
    const json = { 'content-type': 'application/json' };
    expectError(await http.call('POST', '/items', { body: '{"title":', headers: json }), 400, 'invalid_json');
    expectError(await http.call('POST', '/items', { body: '', headers: json }), 400, 'invalid_json');
    expectError(
      await http.call('PUT', '/items/1', { body: "{'qty':1}", headers: json }),
      400,
      'invalid_json',
    );
    expectError(
      await http.call('POST', '/items', { body: new Uint8Array([0x7b, 0xff, 0x7d]), headers: json }),
      400,
      'invalid_json',
    );
    expect(await ctx().sql.count('items')).toBe(6);
    expect((await ctx().sql.rows('SELECT qty FROM items WHERE id = 1'))[0]).toEqual({ qty: 5 });
  });

  it('answers 413 for a body over 1 MiB and writes nothing', async () => {
    const big = JSON.stringify({ title: 'big', note: 'x'.repeat(1024 * 1024) });
    const r = await ctx().http.call('POST', '/items', {
      body: big,
      headers: { 'content-type': 'application/json' },
    });
    expectError(r, 413, 'payload_too_large');
    const justUnder = JSON.stringify({ title: 'fits', meta: 'y'.repeat(1024 * 1024 - 40) });
    expect(Buffer.byteLength(justUnder)).toBeLessThanOrEqual(1024 * 1024);
    expect(
      (
        await ctx().http.call('POST', '/items?select=id', {
          body: justUnder,
          headers: { 'content-type': 'application/json' },
        })
      ).status,
    ).toBe(201);
    expect(await ctx().sql.count('items')).toBe(6);
  });

  it('accepts JSON nested 32 levels and refuses 33 with 400', async () => {
    const nest = (levels: number): unknown => (levels === 0 ? 1 : [nest(levels - 1)]);
    const ok = await ctx().http.post('/items', { title: 'deep', meta: nest(31) });
    expect(ok.status).toBe(201);
    expect((ok.json as { meta: unknown }).meta).toEqual(nest(31));
    expectError(await ctx().http.post('/items', { title: 'deeper', meta: nest(32) }), 400, 'json_too_deep');
    expect(await ctx().sql.count('items')).toBe(6);
  });

  it('updates by key with PATCH and PUT, counting rows even when values do not change', async () => {
    expect((await ctx().http.patch('/items/1', { qty: 50, note: null })).json).toEqual({ updated: 1 });
    expect(await ctx().sql.rows('SELECT qty, note FROM items WHERE id = 1')).toEqual([
      { qty: 50, note: null },
    ]);
    expect((await ctx().http.put('/items/1', { qty: 50 })).json).toEqual({ updated: 1 });
    expect((await ctx().http.put('/tags/zz', { weight: 1 })).status).toBe(404);
  });

  it('updates by filters and answers the count', async () => {
    expect((await ctx().http.patch('/items?done=is.false&qty=gte.0', { note: 'bulk' })).json).toEqual({
      updated: 1,
    });
    expect((await ctx().http.put('/items?qty=gt.1000', { note: 'none' })).json).toEqual({ updated: 0 });
    expect((await ctx().http.patch('/items?title=in.(apple,date)', { done: false })).json).toEqual({
      updated: 2,
    });
    expect(await ctx().sql.rows("SELECT id FROM items WHERE note = 'bulk'")).toEqual([{ id: 2 }]);
  });

  it.each([
    ['no key and no filter', '/items', { qty: 1 }, 400, 'missing_filter'],
    ['an unknown key', '/items/999', { qty: 1 }, 404, 'not_found'],
    ['an unknown column', '/items/1', { nope: 1 }, 400, 'unknown_column'],
    ['a wrong type', '/items/1', { qty: 'x' }, 400, 'invalid_value'],
    ['an empty object', '/items/1', {}, 400, 'invalid_body'],
    ['an array', '/items/1', [{ qty: 1 }], 400, 'invalid_body'],
    ['a unique violation', '/items/2', { title: 'apple' }, 409, 'unique_violation'],
    ['NULL in a NOT NULL column', '/items/2', { title: null }, 400, 'not_null_violation'],
    ['a filter on an unknown column', '/items?nope=eq.1', { qty: 1 }, 400, 'unknown_column'],
  ])('refuses an update with %s and changes nothing', async (_name, path, body, status, code) => {
    const before = await ctx().sql.rows('SELECT * FROM items ORDER BY id');
    expectError(await ctx().http.patch(path, body), status, code);
    expectError(await ctx().http.put(path, body), status, code);
    expect(await ctx().sql.rows('SELECT * FROM items ORDER BY id')).toEqual(before);
  });

  it('deletes by key (404 when absent) and by filters', async () => {
    expect((await ctx().http.delete('/items/1')).json).toEqual({ deleted: 1 });
    expectError(await ctx().http.delete('/items/1'), 404, 'not_found');
    expect((await ctx().http.delete('/items?qty=gt.1000')).json).toEqual({ deleted: 0 });
    expect((await ctx().http.delete('/items?done=is.false&qty=is.null')).json).toEqual({ deleted: 1 });
    expect(ids(await ctx().http.get('/items'))).toEqual([2, 4, 5]);
  });

  it('refuses a delete without key or filter, or with a bad filter, and deletes nothing', async () => {
    expectError(await ctx().http.delete('/items'), 400, 'missing_filter');
    expectError(await ctx().http.delete('/items?order=id'), 400, 'invalid_parameter');
    expectError(await ctx().http.delete('/items?qty=eq.x'), 400, 'invalid_value');
    expect(await ctx().sql.count('items')).toBe(5);
  });

  it('serves a table created after start without a restart', async () => {
    await ctx().sql.exec('CREATE TABLE late_table (id integer PRIMARY KEY, v integer)');
    await ctx().sql.exec('INSERT INTO late_table (id, v) VALUES (1, 10)');
    let r = await ctx().http.get('/late_table');
    for (let i = 0; i < 40 && r.status === 404; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      r = await ctx().http.get('/late_table');
    }
    expect([r.status, r.json]).toEqual([200, [{ id: 1, v: 10 }]]);
    await ctx().sql.exec('DROP TABLE late_table');
  });

  it('logs errors with the request id and never puts SQL or driver text in a body', async () => {
    const r = await ctx().http.post(
      '/items',
      { title: 'apple' },
      { headers: { 'x-request-id': 'trace-me-1' } },
    );
    expect(r.headers.get('x-request-id')).toBe('trace-me-1');
    expect(r.text).not.toMatch(/INSERT|SELECT|duplicate|constraint|SQLITE|ER_|violates/i);
    const logged = ctx().server.log.lines.find((l) => l['requestId'] === 'trace-me-1');
    expect(logged?.['code']).toBe('unique_violation');
  });
});
