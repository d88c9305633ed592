// The PostgREST dialect through the real `@supabase/postgrest-js` client, as an app would use it,
// on every database and on both PostgreSQL paths: reads, filters, modifiers, counts, singular
// answers, inserts, upserts, updates, deletes, errors and the policies behind them. The cases
// follow the client's documented methods; the fixture is the shared notes table (docs/postgrest.md).

import { PostgrestClient } from '@supabase/postgrest-js';
import { beforeEach, describe, expect, it } from 'vitest';
import { forEachAuthDatabase, resetRows, tableRows, type PolicyContext } from '../http/policy-support.js';

interface Note {
  id: number;
  user_id: number | null;
  body: string | null;
}

type Who = 'alice' | 'bob' | 'anonymous';

/** The schema as an app declares it for the client; the dialect is PostgREST 13's (`maxAffected`). */
interface Database {
  __InternalSupabase: { PostgrestVersion: '13' };
  public: {
    Tables: {
      notes: { Row: Note; Insert: Partial<Note>; Update: Partial<Note>; Relationships: [] };
    };
    Views: Record<string, never>;
    Functions: Record<string, never>;
  };
}

type Client = PostgrestClient<Database>;

function clientFor(ctx: PolicyContext, who: Who): Client {
  const headers = who === 'anonymous' ? {} : { Authorization: `Bearer ${ctx[who].token}` };
  return new PostgrestClient(`${ctx.server.url}/rest/v1`, { headers });
}

const idsOf = (rows: ReadonlyArray<{ id: number }> | null): number[] =>
  (rows ?? []).map((r) => Number(r.id)).sort((a, b) => a - b);

forEachAuthDatabase('postgrest-js', (ctx) => {
  const as = (who: Who) => clientFor(ctx(), who);

  beforeEach(async () => {
    const { alice, bob } = ctx();
    await resetRows(
      ctx(),
      'notes',
      ['id', 'user_id', 'body'],
      [
        [1, alice.id, 'apple'],
        [2, alice.id, 'banana split'],
        [3, alice.id, null],
        [4, alice.id, 'cherry (red)'],
        [5, bob.id, 'bob only'],
      ],
    );
  });

  describe('select', () => {
    it('reads every visible row, and nothing of other users', async () => {
      const mine = await as('alice').from('notes').select();
      expect(mine.error).toBeNull();
      expect(mine.status).toBe(200);
      expect(idsOf(mine.data as Note[])).toEqual([1, 2, 3, 4]);
      const bobs = await as('bob').from('notes').select('id');
      expect(idsOf(bobs.data)).toEqual([5]);
    });

    it('selects columns', async () => {
      const { data, error } = await as('alice').from('notes').select('id, body').eq('id', 1);
      expect(error).toBeNull();
      expect(data).toEqual([{ id: 1, body: 'apple' }]);
    });

    const selectIds = () => as('alice').from('notes').select('id');
    type IdQuery = ReturnType<typeof selectIds>;
    it.each<[string, (q: IdQuery) => IdQuery, number[]]>([
      ['eq', (q) => q.eq('body', 'apple'), [1]],
      ['neq', (q) => q.neq('body', 'apple'), [2, 4]],
      ['gt', (q) => q.gt('id', 2), [3, 4]],
      ['gte', (q) => q.gte('id', 2), [2, 3, 4]],
      ['lt', (q) => q.lt('id', 2), [1]],
      ['lte', (q) => q.lte('id', 2), [1, 2]],
      ['like', (q) => q.like('body', '%an%'), [2]],
      ['ilike', (q) => q.ilike('body', 'BANANA%'), [2]],
      ['is null', (q) => q.is('body', null), [3]],
      ['in', (q) => q.in('body', ['apple', 'cherry (red)']), [1, 4]],
      ['not', (q) => q.not('body', 'is', null), [1, 2, 4]],
      ['not in', (q) => q.not('id', 'in', '(1,2)'), [3, 4]],
      ['or', (q) => q.or('id.eq.1,body.is.null'), [1, 3]],
      ['or with and', (q) => q.or('id.eq.1,and(id.gt.2,body.not.is.null)'), [1, 4]],
      ['match', (q) => q.match({ id: 2, body: 'banana split' }), [2]],
      ['filter', (q) => q.filter('id', 'in', '(3,4)'), [3, 4]],
      ['likeAnyOf', (q) => q.likeAnyOf('body', ['app%', '%split']), [1, 2]],
      ['likeAllOf', (q) => q.likeAllOf('body', ['%a%', '%n%']), [2]],
      ['ilikeAnyOf', (q) => q.ilikeAnyOf('body', ['APP%', 'CHERRY%']), [1, 4]],
      ['isDistinct', (q) => q.isDistinct('body', 'apple'), [2, 3, 4]],
    ])('filters with %s', async (_name, apply, expected) => {
      const { data, error } = await apply(selectIds());
      expect(error).toBeNull();
      expect(idsOf(data)).toEqual(expected);
    });

    it('orders, limits and ranges', async () => {
      const ordered = await as('alice')
        .from('notes')
        .select('id')
        .order('body', { ascending: false, nullsFirst: true });
      expect((ordered.data ?? []).map((r) => r.id)).toEqual([3, 4, 2, 1]);
      const limited = await as('alice').from('notes').select('id').order('id').limit(2);
      expect((limited.data ?? []).map((r) => r.id)).toEqual([1, 2]);
      const ranged = await as('alice').from('notes').select('id').order('id').range(1, 2);
      expect((ranged.data ?? []).map((r) => r.id)).toEqual([2, 3]);
    });

    it('counts exactly, with and without the rows', async () => {
      const counted = await as('alice')
        .from('notes')
        .select('id', { count: 'exact' })
        .order('id')
        .range(0, 1);
      expect(counted.error).toBeNull();
      expect([counted.count, counted.status]).toEqual([4, 206]);
      const head = await as('alice').from('notes').select('*', { count: 'exact', head: true }).gt('id', 1);
      expect(head.error).toBeNull();
      expect([head.count, head.data]).toEqual([3, null]);
    });

    it('answers single and maybeSingle', async () => {
      const single = await as('alice').from('notes').select('id, body').eq('id', 1).single();
      expect([single.error, single.data]).toEqual([null, { id: 1, body: 'apple' }]);
      const tooMany = await as('alice').from('notes').select('id').single();
      expect(tooMany.status).toBe(406);
      expect(tooMany.error?.code).toBe('PGRST116');
      const none = await as('alice').from('notes').select('id').eq('id', 5).maybeSingle();
      expect([none.error, none.data]).toEqual([null, null]);
      const one = await as('alice').from('notes').select('id').eq('id', 4).maybeSingle();
      expect(one.data).toEqual({ id: 4 });
    });

    it('strips nulls', async () => {
      const { data } = await as('alice').from('notes').select('id, body').eq('id', 3).stripNulls();
      expect(data).toEqual([{ id: 3 }]);
    });
  });

  describe('writes', () => {
    it('inserts one row without and with select', async () => {
      const minimal = await as('alice').from('notes').insert({ body: 'quiet' });
      expect([minimal.error, minimal.status, minimal.data]).toEqual([null, 201, null]);
      const shown = await as('alice')
        .from('notes')
        .insert({ body: 'shown' })
        .select('body, user_id')
        .single();
      expect(shown.error).toBeNull();
      expect(shown.data).toEqual({ body: 'shown', user_id: ctx().alice.id });
    });

    it('inserts several rows at once, all or nothing', async () => {
      const bulk = await as('alice')
        .from('notes')
        .insert([
          { id: 30, body: 'one' },
          { id: 31, body: 'two' },
        ])
        .select('id');
      expect(bulk.error).toBeNull();
      expect(idsOf(bulk.data)).toEqual([30, 31]);
      const clash = await as('alice')
        .from('notes')
        .insert([
          { id: 32, body: 'fine' },
          { id: 1, body: 'taken' },
        ]);
      expect(clash.status).toBe(409);
      expect(clash.error?.code).toBe('23505');
      const rows = await tableRows(ctx(), 'notes', ['id']);
      expect(rows.map((r) => r['id'])).not.toContain(32);
    });

    it('fills missing columns with their defaults when asked (defaultToNull: false)', async () => {
      const { data, error } = await as('alice')
        .from('notes')
        .insert([{ body: 'no id' }, { id: 40, body: 'with id' }], { defaultToNull: false })
        .select('id, body');
      expect(error).toBeNull();
      expect((data ?? []).map((r) => r.body).sort()).toEqual(['no id', 'with id']);
    });

    it('upserts: merges a row the caller may update, inserts a new one', async () => {
      const { data, error, status } = await as('alice')
        .from('notes')
        .upsert([
          { id: 1, body: 'apple pie' },
          { id: 50, body: 'new' },
        ])
        .select('id, body');
      expect(error).toBeNull();
      expect(status).toBe(201);
      expect([...(data ?? [])].sort((a, b) => a.id - b.id)).toEqual([
        { id: 1, body: 'apple pie' },
        { id: 50, body: 'new' },
      ]);
    });

    it("upserts: refuses to merge into another user's row, nothing written", async () => {
      const { error, status } = await as('alice').from('notes').upsert({ id: 5, body: 'mine now' });
      expect(status).toBe(403);
      expect(error?.code).toBe('42501');
      const rows = await tableRows(ctx(), 'notes', ['id', 'body']);
      expect(rows.find((r) => r['id'] === 5)?.['body']).toBe('bob only');
    });

    it('upserts with ignoreDuplicates and onConflict', async () => {
      const { data, error } = await as('alice')
        .from('notes')
        .upsert(
          [
            { id: 1, body: 'ignored' },
            { id: 51, body: 'added' },
          ],
          { onConflict: 'id', ignoreDuplicates: true },
        )
        .select('id');
      expect(error).toBeNull();
      expect(idsOf(data)).toEqual([51]);
      const rows = await tableRows(ctx(), 'notes', ['id', 'body']);
      expect(rows.find((r) => r['id'] === 1)?.['body']).toBe('apple');
    });

    it('updates with filters, with and without select, and only visible rows', async () => {
      const quiet = await as('alice').from('notes').update({ body: 'x' }).eq('id', 1);
      expect([quiet.error, quiet.status]).toEqual([null, 204]);
      const { data, error } = await as('alice')
        .from('notes')
        .update({ body: 'y' })
        .in('id', [2, 5])
        .select('id, body');
      expect(error).toBeNull();
      expect(data).toEqual([{ id: 2, body: 'y' }]);
      const rows = await tableRows(ctx(), 'notes', ['id', 'body']);
      expect(rows.find((r) => r['id'] === 5)?.['body']).toBe('bob only');
    });

    it('counts the rows an update changed', async () => {
      const { count, error } = await as('alice')
        .from('notes')
        .update({ body: 'z' }, { count: 'exact' })
        .lt('id', 3);
      expect([error, count]).toEqual([null, 2]);
    });

    it('refuses an update that would hand the row to another user', async () => {
      const { error, status } = await as('alice').from('notes').update({ user_id: ctx().bob.id }).eq('id', 1);
      expect(status).toBe(403);
      expect(error?.code).toBe('42501');
    });

    it('deletes with filters, with select', async () => {
      const { data, error } = await as('alice').from('notes').delete().gte('id', 4).select('id');
      expect(error).toBeNull();
      expect(data).toEqual([{ id: 4 }]);
      const rows = await tableRows(ctx(), 'notes', ['id']);
      expect(rows.map((r) => r['id'])).toEqual([1, 2, 3, 5]);
    });

    it('bounds a change with maxAffected, and rolls back with rollback()', async () => {
      const bounded = await as('alice').from('notes').delete().lt('id', 10).maxAffected(1);
      expect(bounded.status).toBe(400);
      expect(bounded.error?.code).toBe('PGRST124');
      const rolled = await as('alice').from('notes').delete().eq('id', 1).select('id').rollback();
      expect([rolled.error, rolled.data]).toEqual([null, [{ id: 1 }]]);
      const rows = await tableRows(ctx(), 'notes', ['id']);
      expect(rows.map((r) => r['id'])).toEqual([1, 2, 3, 4, 5]);
    });
  });

  describe('errors and policies', () => {
    it('gives code, message, details and hint', async () => {
      const { error, status } = await as('alice').from('notes').select('nosuch');
      expect(status).toBe(400);
      expect(error?.code).toBe('42703');
      expect(error?.message).toMatch(/nosuch/);
      expect(error?.details).toMatch(/^unknown_column/);
      expect(error).toHaveProperty('hint');
    });

    it('refuses an anonymous caller with 401 42501', async () => {
      const { error, status } = await as('anonymous').from('notes').select();
      expect(status).toBe(401);
      expect(error?.code).toBe('42501');
    });

    it('says 404 PGRST205 for an unknown table', async () => {
      // An app that has not declared the table: the untyped client.
      const untyped = new PostgrestClient(`${ctx().server.url}/rest/v1`, {
        headers: { Authorization: `Bearer ${ctx().alice.token}` },
      });
      const { error, status } = await untyped.from('nosuch').select();
      expect([status, error?.code]).toEqual([404, 'PGRST205']);
    });

    it('throws with throwOnError', async () => {
      let thrown: unknown;
      try {
        await as('alice').from('notes').select('nosuch').throwOnError();
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toMatchObject({ code: '42703' });
      const { data } = await as('alice').from('notes').select('id').eq('id', 1).throwOnError();
      expect(data).toEqual([{ id: 1 }]);
    });
  });
});
