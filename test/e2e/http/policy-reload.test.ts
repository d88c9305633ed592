// Policy changes take effect: through the API on the very next request; made directly in the
// database (psql, the CLI, another server) within 2 s — on every database.

import { expect, it } from 'vitest';
import { client, type Client } from '../../support/http.js';
import { serverIt } from '../../support/server-only.js';
import { startTestServer } from '../../support/server.js';
import { expectError } from './matrix.js';
import { expectStatus, forEachAuthDatabase, idsOf, resetRows, setPolicies } from './policy-support.js';

const RELOAD_LIMIT_MS = 2000;

/** Milliseconds until `GET path` answers `status`, polling every 20 ms; fails past the limit. */
async function msUntilStatus(
  http: Client,
  path: string,
  status: number,
  headers: Readonly<Record<string, string>> = {},
): Promise<number> {
  const start = performance.now();
  for (;;) {
    const reply = await http.get(path, { headers });
    const elapsed = performance.now() - start;
    if (reply.status === status) return elapsed;
    if (elapsed > RELOAD_LIMIT_MS + 1000)
      throw new Error(`still ${reply.status} after ${Math.round(elapsed)} ms: ${reply.text}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

forEachAuthDatabase('policy reload', (ctx, kind) => {
  it('a change through the API applies to the next request', async () => {
    const { http, alice } = ctx();
    await resetRows(ctx(), 'notes', ['id', 'user_id', 'body'], [[1, ctx().bob.id, 'bob']]);
    await setPolicies(ctx(), []);
    expect(idsOf(await http.get('/notes', alice.auth))).toEqual([]);
    await setPolicies(ctx(), [{ table_name: 'notes', action: 'read', expression: '' }]);
    expect(idsOf(await http.get('/notes', alice.auth))).toEqual([1]);
    const removed = await http.delete('/auth_policies?table_name=eq.notes', ctx().admin.auth);
    expect(removed.json).toEqual({ deleted: 1, warnings: [] });
    expect(idsOf(await http.get('/notes', alice.auth))).toEqual([]);
  });

  serverIt(kind)('a change made directly in the database applies within 2 s', async () => {
    const { http, sql } = ctx();
    await setPolicies(ctx(), []);
    expectStatus(await http.get('/docs'), 401);
    await sql.exec(
      "INSERT INTO auth_policies (table_name, action, expression, description) VALUES ('docs', 'read', '', 'public docs')",
    );
    const appeared = await msUntilStatus(http, '/docs', 200);
    await sql.exec("UPDATE auth_policies SET expression = 'auth_user.is_admin' WHERE table_name = 'docs'");
    const changed = await msUntilStatus(http, '/docs', 401);
    expectError(await http.get('/docs', ctx().alice.auth), 403, 'forbidden');
    await sql.exec("DELETE FROM auth_policies WHERE table_name = 'docs'");
    expect(appeared).toBeLessThan(RELOAD_LIMIT_MS);
    expect(changed).toBeLessThan(RELOAD_LIMIT_MS);
  });

  serverIt(kind)(
    'a second server on the same database sees a change made through the first within 2 s',
    async () => {
      const { http, admin } = ctx();
      await setPolicies(ctx(), []);
      const other = await startTestServer(ctx().config);
      try {
        const otherHttp = client(other.url);
        expectStatus(await otherHttp.get('/docs'), 401);
        const added = await http.post(
          '/auth_policies',
          { table_name: 'docs', action: 'read', expression: '', description: 'public' },
          admin.auth,
        );
        expect(added.status, added.text).toBe(201);
        expect(await msUntilStatus(otherHttp, '/docs', 200)).toBeLessThan(RELOAD_LIMIT_MS);
      } finally {
        await other.handle.close();
        await setPolicies(ctx(), []);
      }
    },
  );
});
