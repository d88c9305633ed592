// The PostgREST dialect through the real `@supabase/supabase-js` client, configured only with its
// documented options (the anon key of `rest auth anon-key`, `accessToken` for a user logged in
// through /auth/login, `realtime.transport` on Node 20), on every database and both PostgreSQL
// paths; and the five-line example of docs/postgrest.md, run as it is written, in a process of
// its own.

import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { createClient, type SupabaseClient } from '@supabase/supabase-js';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { signAnonKey } from '../../../runtime/auth/tokens.js';
import {
  forEachAuthDatabase,
  resetRows,
  setPolicies,
  tableRows,
  type PolicyContext,
} from '../http/policy-support.js';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../../..');

type Transport = NonNullable<
  NonNullable<NonNullable<Parameters<typeof createClient>[2]>['realtime']>['transport']
>;

function supabaseFor(ctx: PolicyContext, anonKey: string, token?: string): SupabaseClient {
  return createClient(ctx.server.url, anonKey, {
    // ws's constructor as supabase-js's documented Node 20 transport; its types are narrower.
    realtime: { transport: WebSocket as unknown as Transport },
    ...(token === undefined ? {} : { accessToken: async () => token }),
  });
}

forEachAuthDatabase('supabase-js', (ctx) => {
  let anonKey = '';

  beforeAll(async () => {
    anonKey = await signAnonKey(ctx().secret);
    // `plain` is public to read; everything else keeps setup's owner rule.
    await setPolicies(ctx(), [{ table_name: 'plain', action: 'read', expression: '' }]);
  });

  beforeEach(async () => {
    const { alice, bob } = ctx();
    await resetRows(
      ctx(),
      'notes',
      ['id', 'user_id', 'body'],
      [
        [1, alice.id, 'first'],
        [2, alice.id, 'second'],
        [3, bob.id, 'bobs'],
      ],
    );
    await resetRows(ctx(), 'plain', ['id', 'body'], [[1, 'public']]);
  });

  describe('anonymous, with the anon key', () => {
    it('reads a public table', async () => {
      const { data, error, status } = await supabaseFor(ctx(), anonKey).from('plain').select('id, body');
      expect(error).toBeNull();
      expect([status, data]).toEqual([200, [{ id: 1, body: 'public' }]]);
    });

    it('is refused where the policy needs a user: 401, code 42501', async () => {
      const { error, status } = await supabaseFor(ctx(), anonKey).from('notes').select();
      expect(status).toBe(401);
      expect(error?.code).toBe('42501');
      expect(error?.message).toEqual(expect.any(String));
      const insert = await supabaseFor(ctx(), anonKey).from('plain').insert({ body: 'x' });
      expect(insert.status).toBe(401);
    });

    it('is refused with a key signed by another secret', async () => {
      const { status, error } = await supabaseFor(ctx(), await signAnonKey('x'.repeat(40)))
        .from('plain')
        .select();
      expect([status, error?.code]).toEqual([401, 'PGRST301']);
    });
  });

  describe('logged in, with accessToken', () => {
    it("reads, creates, updates and deletes the user's own rows only", async () => {
      const alice = supabaseFor(ctx(), anonKey, ctx().alice.token);
      const read = await alice.from('notes').select('id').order('id');
      expect(read.data).toEqual([{ id: 1 }, { id: 2 }]);
      const created = await alice.from('notes').insert({ body: 'third' }).select('body, user_id').single();
      expect(created.error).toBeNull();
      expect(created.data).toEqual({ body: 'third', user_id: ctx().alice.id });
      const updated = await alice.from('notes').update({ body: 'changed' }).in('id', [1, 3]).select('id');
      expect(updated.data).toEqual([{ id: 1 }]);
      const deleted = await alice.from('notes').delete({ count: 'exact' }).eq('id', 2);
      expect([deleted.error, deleted.status, deleted.count]).toEqual([null, 204, 1]);
      const rows = await tableRows(ctx(), 'notes', ['id', 'body']);
      expect(rows.find((r) => r['id'] === 3)?.['body']).toBe('bobs');
      expect(rows.map((r) => r['id'])).not.toContain(2);
    });

    it('upserts only what the policies allow', async () => {
      const alice = supabaseFor(ctx(), anonKey, ctx().alice.token);
      const own = await alice.from('notes').upsert({ id: 1, body: 'merged' }).select('id, body');
      expect(own.data).toEqual([{ id: 1, body: 'merged' }]);
      const other = await alice.from('notes').upsert({ id: 3, body: 'taken' });
      expect([other.status, other.error?.code]).toEqual([403, '42501']);
    });

    it('counts, pages and answers single rows', async () => {
      const alice = supabaseFor(ctx(), anonKey, ctx().alice.token);
      const page = await alice.from('notes').select('id', { count: 'exact' }).order('id').range(1, 1);
      expect([page.status, page.count, page.data]).toEqual([206, 2, [{ id: 2 }]]);
      const none = await alice.from('notes').select('id').eq('id', 3).maybeSingle();
      expect([none.error, none.data]).toEqual([null, null]);
    });
  });
});

describe('the supabase-js example of docs/postgrest.md', () => {
  it('runs as written, anonymously and as a user', async () => {
    const { startAuthSuite } = await import('../http/policy-support.js');
    const ctx = await startAuthSuite('sqlite');
    const dir = path.join(ROOT, 'node_modules', '.cache', 'rest-tests');
    const file = path.join(dir, `supabase-example-${randomUUID()}.mjs`);
    try {
      await resetRows(ctx, 'notes', ['id', 'user_id', 'body'], [[1, ctx.alice.id, 'hello']]);
      const page = await readFile(path.join(ROOT, 'docs', 'postgrest.md'), 'utf8');
      const example = /<!-- supabase-example -->\s*(?:<!-- prettier-ignore -->\s*)?```js\n([\s\S]*?)```/.exec(
        page,
      )?.[1];
      expect(example, 'the example block of docs/postgrest.md').toBeDefined();
      expect(example?.trim().split('\n')).toHaveLength(5);
      await mkdir(dir, { recursive: true });
      await writeFile(file, example ?? '');
      const { REST_TOKEN: _unset, ...inherited } = process.env;
      const env = { ...inherited, REST_URL: ctx.server.url, REST_ANON_KEY: await signAnonKey(ctx.secret) };
      const anonymous = await run(process.execPath, [file], { env, cwd: ROOT });
      expect(anonymous.stdout).toMatch(/status: 401/);
      expect(anonymous.stdout).toMatch(/code: '42501'/);
      const alice = await run(process.execPath, [file], {
        env: { ...env, REST_TOKEN: ctx.alice.token },
        cwd: ROOT,
      });
      expect(alice.stdout).toMatch(/status: 200/);
      expect(alice.stdout).toMatch(/data: \[ \{ id: 1, body: 'hello' \} \]/);
    } finally {
      await rm(file, { force: true });
      await ctx.server.handle.close();
      await ctx.sql.close();
      await ctx.db.drop();
    }
  });
});
