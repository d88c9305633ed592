// The four example patterns, the resolution rules of docs/policy-language.md and the extended grammar of
// §4.3 (and/or/not, literals, claims of an external token), through real HTTP on each database.

import { beforeEach, describe, expect, it } from 'vitest';
import { expectError } from './matrix.js';
import {
  bearer,
  expectStatus,
  forEachAuthDatabase,
  idsOf,
  resetRows,
  setPolicies,
  tableRows,
} from './policy-support.js';

forEachAuthDatabase('policy patterns', (ctx) => {
  beforeEach(async () => {
    const { alice, bob } = ctx();
    await resetRows(
      ctx(),
      'notes',
      ['id', 'user_id', 'body'],
      [
        [1, alice.id, 'alice 1'],
        [2, bob.id, 'bob 1'],
        [3, null, 'nobody'],
      ],
    );
    await resetRows(
      ctx(),
      'posts',
      ['id', 'author_id', 'title', 'published'],
      [
        [1, alice.id, 'alice draft', false],
        [2, alice.id, 'alice post', true],
        [3, bob.id, 'bob post', true],
      ],
    );
    await resetRows(
      ctx(),
      'docs',
      ['id', 'org_id', 'title', 'level'],
      [
        [1, 10, 'org 10 low', 1],
        [2, 10, 'org 10 high', 5],
        [3, 20, 'org 20 low', 1],
        [4, null, 'no org', 0],
      ],
    );
  });

  describe('the four example patterns', () => {
    it('public table: read policy "" lets anyone read, writes still follow the owner rule', async () => {
      const { http, alice } = ctx();
      await setPolicies(ctx(), [{ table_name: 'notes', action: 'read', expression: '' }]);
      expect(idsOf(await http.get('/notes'))).toEqual([1, 2, 3]);
      expect(idsOf(await http.get('/notes', alice.auth))).toEqual([1, 2, 3]);
      // create falls back to the `all` level (no notes row covers create).
      expectStatus(await http.post('/notes', { body: 'x' }), 401);
      expect((await http.post('/notes', { body: 'x' }, alice.auth)).status).toBe(201);
    });

    it('public with ?mine: read is public, read_mine filters by owner', async () => {
      const { http, alice, bob } = ctx();
      await setPolicies(ctx(), [
        { table_name: 'notes', action: 'read', expression: '' },
        { table_name: 'notes', action: 'read_mine', expression: 'user_id = auth_user.id' },
      ]);
      expect(idsOf(await http.get('/notes', bob.auth))).toEqual([1, 2, 3]);
      expect(idsOf(await http.get('/notes?mine', bob.auth))).toEqual([2]);
      expect(idsOf(await http.get('/notes?mine&order=id', alice.auth))).toEqual([1]);
      expect((await http.get('/notes?mine&count', alice.auth)).json).toEqual({ count: 1 });
      expectStatus(await http.get('/notes?mine'), 401);
    });

    it('login required: auth_user.is_authenticated', async () => {
      const { http, alice, bob } = ctx();
      await setPolicies(ctx(), [
        { table_name: 'notes', action: 'all', expression: 'auth_user.is_authenticated' },
      ]);
      expectStatus(await http.get('/notes'), 401);
      expect(idsOf(await http.get('/notes', alice.auth))).toEqual([1, 2, 3]);
      expect((await http.patch('/notes/2', { body: 'edited by alice' }, alice.auth)).json).toEqual({
        updated: 1,
      });
      const created = await http.post('/notes', { body: 'anyone may', user_id: alice.id }, bob.auth);
      expect(created.status).toBe(201);
      expectStatus(await http.delete('/notes/1'), 401);
      expect(await ctx().sql.count('notes')).toBe(4);
    });

    it('custom owner column: author_id = auth_user.id', async () => {
      const { http, alice, bob } = ctx();
      await setPolicies(ctx(), [
        { table_name: 'posts', action: 'all', expression: 'author_id = auth_user.id' },
      ]);
      expect(idsOf(await http.get('/posts', alice.auth))).toEqual([1, 2]);
      const created = await http.post('/posts', { title: 'by alice' }, alice.auth);
      expect(created.status).toBe(201);
      expect(created.json).toMatchObject({ author_id: alice.id, title: 'by alice' });
      expectError(
        await http.post('/posts', { title: 'forged', author_id: bob.id }, alice.auth),
        403,
        'owner_mismatch',
      );
      expectError(
        await http.patch('/posts/1', { author_id: bob.id }, alice.auth),
        403,
        'policy_check_failed',
      );
      expectError(await http.delete('/posts/3', alice.auth), 404, 'not_found');
      expect(await tableRows(ctx(), 'posts', ['id', 'author_id', 'title'])).toEqual([
        { id: 1, author_id: alice.id, title: 'alice draft' },
        { id: 2, author_id: alice.id, title: 'alice post' },
        { id: 3, author_id: bob.id, title: 'bob post' },
        { id: expect.any(Number), author_id: alice.id, title: 'by alice' },
      ]);
    });
  });

  describe('create judges the row as stored', () => {
    it('a column the body leaves to its database default counts, on both paths', async () => {
      const { http, alice } = ctx();
      await setPolicies(ctx(), [
        { table_name: 'posts', action: 'create', expression: 'author_id = auth_user.id and not published' },
      ]);
      const created = await http.post('/posts', { title: 'draft' }, alice.auth);
      expect(created.status, created.text).toBe(201);
      expect(created.json).toMatchObject({ author_id: alice.id, title: 'draft', published: false });
      // `select` narrows the answer, not what the policy reads.
      const narrow = await http.post('/posts?select=title', { title: 'narrow draft' }, alice.auth);
      expect(narrow.status, narrow.text).toBe(201);
      expect(narrow.json).toEqual({ title: 'narrow draft' });

      await setPolicies(ctx(), [
        { table_name: 'posts', action: 'create', expression: 'author_id = auth_user.id and published' },
      ]);
      expectError(
        await http.post('/posts', { title: 'unpublished' }, alice.auth),
        403,
        'policy_check_failed',
      );
      expectError(
        await http.post('/posts', [{ title: 'ok', published: true }, { title: 'defaulted' }], alice.auth),
        403,
        'policy_check_failed',
      );
      expect((await tableRows(ctx(), 'posts', ['title'])).map((r) => r['title'])).toEqual([
        'alice draft',
        'alice post',
        'bob post',
        'draft',
        'narrow draft',
      ]);
    });
  });

  describe('resolution rules', () => {
    it('a table’s own rows beat the `all` level', async () => {
      await setPolicies(ctx(), [{ table_name: 'notes', action: 'all', expression: 'auth_user.is_admin' }]);
      expectError(await ctx().http.get('/notes', ctx().alice.auth), 403, 'forbidden');
      expect(idsOf(await ctx().http.get('/notes', ctx().admin.auth))).toEqual([1, 2, 3]);
    });

    it('a row for the action beats the table’s `all` row', async () => {
      await setPolicies(ctx(), [
        { table_name: 'notes', action: 'all', expression: 'auth_user.is_admin' },
        { table_name: 'notes', action: 'read', expression: '' },
      ]);
      expect(idsOf(await ctx().http.get('/notes'))).toEqual([1, 2, 3]);
      expectError(await ctx().http.delete('/notes/1', ctx().alice.auth), 403, 'forbidden');
    });

    it('several rows of one level combine with OR', async () => {
      await setPolicies(ctx(), [
        { table_name: 'notes', action: 'read', expression: 'user_id = auth_user.id' },
        { table_name: 'notes', action: 'read', expression: 'user_id is null' },
      ]);
      expect(idsOf(await ctx().http.get('/notes', ctx().bob.auth))).toEqual([2, 3]);
    });

    it('a table whose rows cover other actions only falls back to the `all` level', async () => {
      await setPolicies(ctx(), [{ table_name: 'notes', action: 'delete', expression: '' }]);
      expect(idsOf(await ctx().http.get('/notes', ctx().bob.auth))).toEqual([2]);
      expect((await ctx().http.delete('/notes/1')).json).toEqual({ deleted: 1 });
    });

    it('no row at any level → deny (401 anonymous, 403 logged in)', async () => {
      await setPolicies(ctx(), [{ table_name: 'notes', action: 'read', expression: '' }]);
      const cleared = await ctx().http.delete('/auth_policies?id=eq.3', ctx().admin.auth);
      expect(cleared.json).toEqual({ deleted: 1, warnings: [] });
      try {
        expectStatus(await ctx().http.get('/docs'), 401);
        expectError(await ctx().http.get('/docs', ctx().alice.auth), 403, 'forbidden');
        expectError(await ctx().http.post('/notes', { body: 'x' }, ctx().alice.auth), 403, 'forbidden');
      } finally {
        const restored = await ctx().http.post(
          '/auth_policies',
          {
            id: 3,
            table_name: 'all',
            action: 'all',
            expression: 'user_id = auth_user.id',
            description: 'all tables/actions are limited to be filtered by user_id',
          },
          ctx().admin.auth,
        );
        expect(restored.status, restored.text).toBe(201);
      }
    });
  });

  describe('extended grammar', () => {
    it('and / or / not with literals filter rows', async () => {
      const { http, alice, bob } = ctx();
      await setPolicies(ctx(), [
        {
          table_name: 'posts',
          action: 'read',
          expression: "published = true and not title = 'bob post' or author_id = auth_user.id",
        },
      ]);
      expect(idsOf(await http.get('/posts', alice.auth))).toEqual([1, 2]);
      expect(idsOf(await http.get('/posts', bob.auth))).toEqual([2, 3]);
      expect(idsOf(await http.get('/posts'))).toEqual([2]);
    });

    it('in, is null, comparisons and decimals', async () => {
      const { http, alice } = ctx();
      await setPolicies(ctx(), [
        {
          table_name: 'docs',
          action: 'read',
          expression: 'org_id in (10, 30) and level >= 1.5 or org_id is null',
        },
      ]);
      expect(idsOf(await http.get('/docs', alice.auth))).toEqual([2, 4]);
    });

    it('auth_user.claims.<name> from an external token signed with the same secret', async () => {
      const { http, mint } = ctx();
      await setPolicies(ctx(), [
        {
          table_name: 'docs',
          action: 'all',
          expression: "org_id = auth_user.claims.org_id and auth_user.claims.role != 'guest'",
        },
      ]);
      const member = bearer(await mint({ user_id: 900, org_id: 10, role: 'member' }));
      const stringOrg = bearer(await mint({ user_id: '901', org_id: '20', role: 'member' }));
      const guest = bearer(await mint({ user_id: 902, org_id: 10, role: 'guest' }));
      const noOrg = bearer(await mint({ user_id: 903 }));
      expect(idsOf(await http.get('/docs', member))).toEqual([1, 2]);
      expect(idsOf(await http.get('/docs', stringOrg))).toEqual([3]);
      // The claims decide in-process: a guest or a token without org_id can match no row at all.
      expectError(await http.get('/docs', guest), 403, 'forbidden');
      expectError(await http.get('/docs', noOrg), 403, 'forbidden');
      expect((await http.post('/docs', { org_id: 10, title: 'created in org' }, member)).status).toBe(201);
      expectError(
        await http.post('/docs', { org_id: 20, title: 'other org' }, member),
        403,
        'policy_check_failed',
      );
      expect(await ctx().sql.count('docs')).toBe(5);
    });

    it('auth_user.username and is_admin combine with row columns', async () => {
      const { http, alice, admin } = ctx();
      await setPolicies(ctx(), [
        {
          table_name: 'notes',
          action: 'read',
          expression: 'body = auth_user.username or auth_user.is_admin and user_id is not null',
        },
      ]);
      await ctx().sql.exec(`INSERT INTO notes (id, user_id, body) VALUES (9, NULL, 'alice')`);
      expect(idsOf(await http.get('/notes', alice.auth))).toEqual([9]);
      expect(idsOf(await http.get('/notes', admin.auth))).toEqual([1, 2]);
    });
  });
});
