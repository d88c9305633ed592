// The PostgREST dialect at /rest/v1 (docs/postgrest.md) over raw HTTP on every database, PostgreSQL
// with native RLS and without: the wire details a client library hides — status codes,
// Content-Range, Prefer, Accept, profiles, the flat error shape — and that the same policies hold.

import { beforeEach, describe, expect, it } from 'vitest';
import type { Reply } from '../../support/http.js';
import { forEachAuthDatabase, resetRows, tableRows, type PolicyContext } from './policy-support.js';

interface FlatError {
  readonly code: string;
  readonly message: string;
  readonly details: string;
  readonly hint: string | null;
}

const flat = (reply: Reply): FlatError => reply.json as FlatError;
const ids = (reply: Reply): number[] => (reply.json as Array<{ id: number }>).map((r) => Number(r.id));

function withHeaders(ctx: PolicyContext, who: 'alice' | 'bob' | 'admin', headers: Record<string, string>) {
  return { headers: { ...ctx[who].auth.headers, ...headers } };
}

forEachAuthDatabase('the PostgREST dialect', (ctx) => {
  beforeEach(async () => {
    const { alice, bob } = ctx();
    await resetRows(
      ctx(),
      'notes',
      ['id', 'user_id', 'body'],
      [
        [1, alice.id, 'a1'],
        [2, alice.id, 'a2, with a comma'],
        [3, alice.id, null],
        [4, bob.id, 'b1'],
      ],
    );
  });

  describe('reads', () => {
    it('answers the rows the policy lets through, with Content-Range', async () => {
      const reply = await ctx().http.get('/rest/v1/notes?select=id,body&order=id', ctx().alice.auth);
      expect(reply.status, reply.text).toBe(200);
      expect(reply.json).toEqual([
        { id: 1, body: 'a1' },
        { id: 2, body: 'a2, with a comma' },
        { id: 3, body: null },
      ]);
      expect(reply.headers.get('content-range')).toBe('0-2/*');
    });

    it('counts with Prefer: count=exact and answers 206 for part of the rows', async () => {
      const reply = await ctx().http.get(
        '/rest/v1/notes?order=id&limit=2&offset=1',
        withHeaders(ctx(), 'alice', { Prefer: 'count=exact' }),
      );
      expect(reply.status, reply.text).toBe(206);
      expect(ids(reply)).toEqual([2, 3]);
      expect(reply.headers.get('content-range')).toBe('1-2/3');
    });

    it('counts an empty page past the rows and refuses an offset past the count', async () => {
      const last = await ctx().http.get(
        '/rest/v1/notes?offset=3',
        withHeaders(ctx(), 'alice', { Prefer: 'count=exact' }),
      );
      expect([last.status, last.headers.get('content-range'), last.json]).toEqual([206, '*/3', []]);
      const past = await ctx().http.get(
        '/rest/v1/notes?offset=4',
        withHeaders(ctx(), 'alice', { Prefer: 'count=exact' }),
      );
      expect(past.status).toBe(416);
      expect(flat(past).code).toBe('PGRST103');
    });

    it('answers HEAD with the headers only', async () => {
      const reply = await ctx().http.call(
        'HEAD',
        '/rest/v1/notes',
        withHeaders(ctx(), 'alice', { Prefer: 'count=exact' }),
      );
      expect(reply.status).toBe(200);
      expect(reply.text).toBe('');
      expect(reply.headers.get('content-range')).toBe('0-2/3');
    });

    it.each([
      ['body=eq.a1', [1]],
      ['body=not.eq.a1', [2]],
      ['body=isdistinct.a1', [2, 3]],
      ['body=is.null', [3]],
      ['body=not.is.null', [1, 2]],
      ['body=in.(a1,"a2, with a comma")', [1, 2]],
      ['body=like.a%25', [1, 2]],
      ['body=like.a*', [1, 2]],
      ['body=ilike(any).{A1,*COMMA}', [1, 2]],
      ['body=like(all).{a*,*comma}', [2]],
      ['or=(id.eq.1,body.is.null)', [1, 3]],
      ['or=(id.eq.1,and(id.gt.1,body.like."a2, with*"))', [1, 2]],
      ['not.or=(id.eq.1,id.eq.2)', [3]],
      ['and=(id.gte.2,or(body.is.null,id.eq.2))', [2, 3]],
      ['id=gt.1&or=(body.eq.a1,body.is.null)', [3]],
    ])('filters %s', async (filter, expected) => {
      const reply = await ctx().http.get(`/rest/v1/notes?order=id&${filter}`, ctx().alice.auth);
      expect(reply.status, reply.text).toBe(200);
      expect(ids(reply)).toEqual(expected);
    });

    it('answers one row as an object for vnd.pgrst.object+json, and 406 otherwise', async () => {
      const accept = { Accept: 'application/vnd.pgrst.object+json' };
      const one = await ctx().http.get('/rest/v1/notes?id=eq.1', withHeaders(ctx(), 'alice', accept));
      expect([one.status, one.json]).toEqual([200, { id: 1, user_id: ctx().alice.id, body: 'a1' }]);
      const several = await ctx().http.get('/rest/v1/notes', withHeaders(ctx(), 'alice', accept));
      expect(several.status).toBe(406);
      expect(flat(several).code).toBe('PGRST116');
      const hidden = await ctx().http.get('/rest/v1/notes?id=eq.4', withHeaders(ctx(), 'alice', accept));
      expect(hidden.status).toBe(406);
    });

    it('strips nulls with nulls=stripped', async () => {
      const reply = await ctx().http.get(
        '/rest/v1/notes?id=eq.3&select=id,body',
        withHeaders(ctx(), 'alice', { Accept: 'application/vnd.pgrst.array+json;nulls=stripped' }),
      );
      expect(reply.json).toEqual([{ id: 3 }]);
    });
  });

  describe('errors', () => {
    it.each([
      ['/rest/v1/notes?select=nosuch', 400, '42703'],
      ['/rest/v1/notes?nosuch=eq.1', 400, '42703'],
      ['/rest/v1/notes?order=nosuch', 400, '42703'],
      ['/rest/v1/nosuch', 404, 'PGRST205'],
      ['/rest/v1/notes?id=eq.1&limit=x', 400, 'PGRST100'],
      ['/rest/v1/notes?select=*,author(*)', 400, 'PGRST100'],
      ['/rest/v1/notes?body=fts.word', 400, 'PGRST100'],
      ['/rest/v1/notes?or=(id.eq.1', 400, 'PGRST100'],
      ['/rest/v1/rpc/do_it', 400, 'PGRST100'],
    ])('GET %s → %i %s in the flat shape', async (path, status, code) => {
      const reply = await ctx().http.get(path, ctx().alice.auth);
      expect(reply.status, reply.text).toBe(status);
      const body = flat(reply);
      expect(body.code).toBe(code);
      expect(typeof body.message).toBe('string');
      expect(typeof body.details).toBe('string');
      expect(Object.keys(body).sort()).toEqual(['code', 'details', 'hint', 'message']);
    });

    it('says which feature is not supported', async () => {
      const reply = await ctx().http.get('/rest/v1/notes?select=*,author(*)', ctx().alice.auth);
      expect(flat(reply).message).toMatch(/embedding .* not supported/);
      expect(flat(reply).details).toMatch(/^unsupported_feature/);
    });

    it('answers an anonymous caller 401 and a refused one 403, code 42501', async () => {
      const anonymous = await ctx().http.post('/rest/v1/notes', { body: 'x' });
      expect([anonymous.status, flat(anonymous).code]).toEqual([401, '42501']);
      const other = await ctx().http.post(
        '/rest/v1/notes',
        { body: 'x', user_id: ctx().bob.id },
        ctx().alice.auth,
      );
      expect([other.status, flat(other).code]).toEqual([403, '42501']);
    });

    it('answers a unique violation 409 23505', async () => {
      const reply = await ctx().http.post('/rest/v1/notes', { id: 1, body: 'again' }, ctx().alice.auth);
      expect([reply.status, flat(reply).code]).toEqual([409, '23505']);
    });

    it('accepts the public profile and refuses another schema', async () => {
      const ok = await ctx().http.get(
        '/rest/v1/notes',
        withHeaders(ctx(), 'alice', { 'Accept-Profile': 'public' }),
      );
      expect(ok.status).toBe(200);
      const other = await ctx().http.get(
        '/rest/v1/notes',
        withHeaders(ctx(), 'alice', { 'Accept-Profile': 'secret' }),
      );
      expect([other.status, flat(other).code]).toEqual([406, 'PGRST106']);
    });

    it('refuses PUT with 405', async () => {
      const reply = await ctx().http.put('/rest/v1/notes?id=eq.1', { body: 'x' }, ctx().alice.auth);
      expect(reply.status).toBe(405);
    });
  });

  describe('writes', () => {
    it('creates with return=minimal (201, no body) and return=representation (the rows as stored)', async () => {
      const minimal = await ctx().http.post('/rest/v1/notes', { body: 'm' }, ctx().alice.auth);
      expect([minimal.status, minimal.text]).toEqual([201, '']);
      const full = await ctx().http.post(
        '/rest/v1/notes?select=body,user_id',
        [{ body: 'r1' }, { body: 'r2' }],
        withHeaders(ctx(), 'alice', { Prefer: 'return=representation' }),
      );
      expect(full.status, full.text).toBe(201);
      expect(full.json).toEqual([
        { body: 'r1', user_id: ctx().alice.id },
        { body: 'r2', user_id: ctx().alice.id },
      ]);
    });

    it('takes only the columns of columns= and fills the missing ones with NULL or the default', async () => {
      const reply = await ctx().http.post(
        '/rest/v1/notes?columns="id","body"',
        [{ id: 10, body: 'kept', ignored: 1 }, { id: 11 }],
        withHeaders(ctx(), 'alice', { Prefer: 'return=representation' }),
      );
      expect(reply.status, reply.text).toBe(201);
      expect((reply.json as Array<{ body: unknown }>).map((r) => r.body)).toEqual(['kept', null]);
    });

    it('updates and deletes with filters: 204, or the rows with return=representation', async () => {
      const patched = await ctx().http.patch('/rest/v1/notes?id=eq.1', { body: 'p' }, ctx().alice.auth);
      expect([patched.status, patched.text]).toEqual([204, '']);
      const shown = await ctx().http.patch(
        '/rest/v1/notes?id=in.(1,2,4)&select=id,body',
        { body: 'q' },
        withHeaders(ctx(), 'alice', { Prefer: 'return=representation,count=exact' }),
      );
      expect(shown.status, shown.text).toBe(200);
      // RETURNING hands the rows back in no particular order, as PostgREST does.
      expect([...(shown.json as Array<{ id: number }>)].sort((a, b) => a.id - b.id)).toEqual([
        { id: 1, body: 'q' },
        { id: 2, body: 'q' },
      ]);
      expect(shown.headers.get('content-range')).toBe('*/2');
      const deleted = await ctx().http.delete(
        '/rest/v1/notes?id=eq.1&select=id',
        withHeaders(ctx(), 'alice', { Prefer: 'return=representation' }),
      );
      expect([deleted.status, deleted.json]).toEqual([200, [{ id: 1 }]]);
      const rows = await tableRows(ctx(), 'notes', ['id', 'body']);
      expect(rows.map((r) => r['id'])).toEqual([2, 3, 4]);
    });

    it('refuses an update without a filter', async () => {
      const reply = await ctx().http.patch('/rest/v1/notes', { body: 'all' }, ctx().alice.auth);
      expect(reply.status).toBe(400);
    });

    it('writes nothing past max-affected with handling=strict', async () => {
      const reply = await ctx().http.patch(
        '/rest/v1/notes?id=lt.10',
        { body: 'z' },
        withHeaders(ctx(), 'alice', { Prefer: 'handling=strict, max-affected=2' }),
      );
      expect([reply.status, flat(reply).code]).toEqual([400, 'PGRST124']);
      const rows = await tableRows(ctx(), 'notes', ['id', 'body']);
      expect(rows.filter((r) => r['body'] === 'z')).toEqual([]);
    });

    it('answers and rolls back with tx=rollback', async () => {
      const rolled = await ctx().http.post(
        '/rest/v1/notes?select=body',
        { body: 'rolled back' },
        withHeaders(ctx(), 'alice', { Prefer: 'return=representation, tx=rollback' }),
      );
      expect([rolled.status, rolled.json]).toEqual([201, [{ body: 'rolled back' }]]);
      const rows = await tableRows(ctx(), 'notes', ['id', 'body']);
      expect(rows.map((r) => r['body'])).not.toContain('rolled back');
    });
  });

  describe('upsert', () => {
    const merge = (ctx: PolicyContext) =>
      withHeaders(ctx, 'alice', { Prefer: 'resolution=merge-duplicates,return=representation' });

    it('updates a row the caller may change and inserts a new one', async () => {
      const reply = await ctx().http.post(
        '/rest/v1/notes?select=id,body',
        [
          { id: 1, body: 'merged' },
          { id: 20, body: 'new' },
        ],
        merge(ctx()),
      );
      expect(reply.status, reply.text).toBe(201);
      expect(reply.json).toEqual([
        { id: 1, body: 'merged' },
        { id: 20, body: 'new' },
      ]);
      const rows = await tableRows(ctx(), 'notes', ['id', 'user_id', 'body']);
      expect(rows.find((r) => r['id'] === 20)).toEqual({ id: 20, user_id: ctx().alice.id, body: 'new' });
    });

    it("refuses to merge into another user's row, and writes nothing", async () => {
      const reply = await ctx().http.post(
        '/rest/v1/notes',
        [
          { id: 21, body: 'would be new' },
          { id: 4, body: 'stolen' },
        ],
        merge(ctx()),
      );
      expect([reply.status, flat(reply).code]).toEqual([403, '42501']);
      const rows = await tableRows(ctx(), 'notes', ['id', 'body']);
      expect(rows.map((r) => r['id'])).toEqual([1, 2, 3, 4]);
      expect(rows.find((r) => r['id'] === 4)?.['body']).toBe('b1');
    });

    it('keeps existing rows with ignore-duplicates', async () => {
      const reply = await ctx().http.post(
        '/rest/v1/notes?on_conflict=id&select=id',
        [
          { id: 1, body: 'ignored' },
          { id: 22, body: 'new' },
        ],
        withHeaders(ctx(), 'alice', { Prefer: 'resolution=ignore-duplicates,return=representation' }),
      );
      expect([reply.status, reply.json]).toEqual([201, [{ id: 22 }]]);
      const rows = await tableRows(ctx(), 'notes', ['id', 'body']);
      expect(rows.find((r) => r['id'] === 1)?.['body']).toBe('a1');
    });

    it('does not skip a key held by a row the caller cannot read', async () => {
      const reply = await ctx().http.post(
        '/rest/v1/notes',
        { id: 4, body: 'hidden' },
        withHeaders(ctx(), 'alice', { Prefer: 'resolution=ignore-duplicates' }),
      );
      expect([reply.status, flat(reply).code]).toEqual([409, '23505']);
    });
  });
});
