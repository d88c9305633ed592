// docs/http-api.md: text with a lone UTF-16 surrogate or NUL is a 400 on every database, nothing
// written — in a body value of any column (JSON contents and keys included), in a filter, in a
// key — and so is a query string or body whose bytes are not UTF-8 (no silent U+FFFD).

import { beforeEach, expect, it } from 'vitest';
import { expectError, forEachDatabase, seedItems } from './matrix.js';

const BAD_TEXT = [
  ['a lone high surrogate', 'apple\uD800'],
  ['a lone low surrogate', '\uDC00apple'],
  ['a high surrogate at the end', 'apple\uD83D'],
  ['NUL', 'app\u0000le'],
] as const;

const message = (column: string): string =>
  `${column} must be text without NUL characters or lone UTF-16 surrogates`;

forEachDatabase('text values', (ctx) => {
  beforeEach(() => seedItems(ctx()));

  async function unchanged(): Promise<void> {
    expect(await ctx().sql.count('items')).toBe(5);
    expect(
      await ctx().sql.rows(
        "SELECT id FROM items WHERE title NOT IN ('apple', 'Banana', 'cherry pie', 'date', 'Élan')",
      ),
    ).toEqual([]);
  }

  function expectBadText(
    reply: Awaited<ReturnType<ReturnType<typeof ctx>['http']['get']>>,
    column: string,
  ): void {
    expectError(reply, 400, 'invalid_value', { column });
    expect((reply.json as { error: { message: string } }).error.message).toBe(message(column));
  }

  it.each(BAD_TEXT)('a create with %s in a text column → 400, nothing written', async (_what, text) => {
    expectBadText(await ctx().http.post('/items', { title: text }), 'title');
    expectBadText(
      await ctx().http.post('/items', [{ title: 'fine' }, { title: 'fine too', note: text }]),
      'note',
    );
    await unchanged();
  });

  it.each(BAD_TEXT)(
    'a create with %s inside a JSON column (value or key) → 400, nothing written',
    async (_what, text) => {
      const { http } = ctx();
      expectBadText(await http.post('/items', { title: 'j1', meta: text }), 'meta');
      expectBadText(
        await http.post('/items', { title: 'j2', meta: { list: ['ok', { deep: text }] } }),
        'meta',
      );
      expectBadText(await http.post('/items', { title: 'j3', meta: { [text]: 1 } }), 'meta');
      await unchanged();
    },
  );

  it.each(BAD_TEXT)('an update with %s → 400, the row unchanged', async (_what, text) => {
    const { http, sql } = ctx();
    expectBadText(await http.patch('/items/1', { note: text }), 'note');
    expectBadText(await http.put('/items?qty=gt.0', { meta: [text] }), 'meta');
    expect(await sql.rows('SELECT note FROM items WHERE id = 1')).toEqual([{ note: 'Fresh' }]);
    await unchanged();
  });

  it('NUL in a filter value, an in-list item, a like pattern or a key → 400', async () => {
    const { http } = ctx();
    expectBadText(await http.get('/items?title=eq.a%00b'), 'title');
    expectBadText(await http.get('/items?title=in.(apple,a%00b)'), 'title');
    expectBadText(await http.get('/items?note=like.*%00*'), 'note');
    expectBadText(await http.delete('/items?title=eq.apple%00'), 'title');
    expectBadText(await http.get('/tags/a%00'), 'name');
    await unchanged();
  });

  it('a lone surrogate in the query string (CESU-8 bytes) is 400 invalid_query, not U+FFFD', async () => {
    const { http } = ctx();
    expectError(await http.get('/items?title=eq.%ED%A0%80'), 400, 'invalid_query');
    expectError(await http.delete('/items?title=eq.%ED%B0%80'), 400, 'invalid_query');
    expectError(await http.get('/items?title=in.(caf%E9)'), 400, 'invalid_query');
    await unchanged();
  });

  it('a lone surrogate in the path (CESU-8 bytes) is 400 invalid_path', async () => {
    expectError(await ctx().http.get('/tags/%ED%A0%80'), 400, 'invalid_path');
  });

  it('a body whose bytes are a lone surrogate in CESU-8 is 400 invalid_json, nothing written', async () => {
    const body = Buffer.concat([
      Buffer.from('{"title":"x'),
      Buffer.from([0xed, 0xa0, 0x80]),
      Buffer.from('"}'),
    ]);
    const reply = await ctx().http.call('POST', '/items', {
      body,
      headers: { 'content-type': 'application/json' },
    });
    expectError(reply, 400, 'invalid_json');
    await unchanged();
  });

  it('surrogate pairs are ordinary text: stored and read back unchanged, filters match them', async () => {
    const { http } = ctx();
    const title = 'clef \uD834\uDD1E';
    const created = await http.post('/items', { title, meta: { '\uD83D\uDE00': ['\uD834\uDD1E'] } });
    expect(created.status, created.text).toBe(201);
    const found = await http.get(`/items?title=eq.${encodeURIComponent(title)}&select=title,meta`);
    expect(found.json).toEqual([{ title, meta: { '😀': ['𝄞'] } }]);
  });
});
