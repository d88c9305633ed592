// A stored policy row that no longer parses or names a missing column (written by hand in the
// database): the server logs it once at error level with its id, table, action and the
// error when it loads the policies — not again on later reloads — and fails closed: the row allows
// nothing, on every database and on both PostgreSQL paths.

import { expect } from 'vitest';
import { serverIt } from '../../support/server-only.js';
import {
  expectStatus,
  forEachAuthDatabase,
  resetRows,
  setPolicies,
  type PolicyContext,
} from './policy-support.js';

const ERROR = 50;

/** The server's error lines about broken policies. */
const brokenLines = (c: PolicyContext): Array<Readonly<Record<string, unknown>>> =>
  c.server.log.lines.filter((l) => l['level'] === ERROR && /^policy \d+ .* is broken/.test(String(l['msg'])));

/** Waits (up to 5 s) until an error line matches `pattern`; returns every line that does. */
async function waitForBroken(
  c: PolicyContext,
  pattern: RegExp,
): Promise<Array<Readonly<Record<string, unknown>>>> {
  const matching = () => brokenLines(c).filter((l) => pattern.test(String(l['msg'])));
  for (let i = 0; i < 50 && matching().length === 0; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return matching();
}

/** Inserts a policy row by hand, as psql would; returns its id. */
async function insertByHand(
  c: PolicyContext,
  table: string,
  action: string,
  expression: string,
): Promise<number> {
  await c.sql.exec(
    `INSERT INTO auth_policies (table_name, action, expression, description) VALUES ('${table}', '${action}', '${expression.replaceAll("'", "''")}', 'by hand')`,
  );
  const rows = await c.sql.rows("SELECT max(id) AS id FROM auth_policies WHERE description = 'by hand'");
  return Number(rows[0]?.['id']);
}

forEachAuthDatabase('broken stored policies', (ctx, kind) => {
  // The server hears of a row written by hand by NOTIFY; PGlite delivers none across connections.
  const byHand = serverIt(kind);
  byHand('a row that no longer parses is logged once at error level, and denies', async () => {
    const c = ctx();
    await setPolicies(c, []);
    await resetRows(c, 'notes', ['id', 'user_id', 'body'], [[1, c.alice.id, 'mine']]);
    const id = await insertByHand(c, 'notes', 'read', 'user_id = = auth_user.id');
    const logged = await waitForBroken(c, new RegExp(`^policy ${id} `));
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({
      policy_id: id,
      table_name: 'notes',
      action: 'read',
      expression: 'user_id = = auth_user.id',
      error: "expected a column, auth_user.<attr> or a literal at 1:11, found '='",
      msg: `policy ${id} (table 'notes', action 'read') is broken and allows nothing until it is fixed: expected a column, auth_user.<attr> or a literal at 1:11, found '='`,
    });
    // Fail closed: the only chosen row is broken, so alice does not see her own note.
    expectStatus(await c.http.get('/notes', c.alice.auth), 403, 'forbidden');
    expectStatus(await c.http.get('/notes'), 401);

    // Later loads (a valid row added by hand, then one through the API) do not log it again.
    const valid = await insertByHand(c, 'docs', 'read', '');
    const added = await c.http.post(
      '/auth_policies',
      { table_name: 'posts', action: 'read', expression: '', description: 'public posts' },
      c.admin.auth,
    );
    expect(added.status, added.text).toBe(201);
    for (let i = 0; i < 40 && (await c.http.get('/docs')).status !== 200; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expectStatus(await c.http.get('/docs'), 200);
    expect(brokenLines(c).filter((l) => l['policy_id'] === id)).toHaveLength(1);
    expect(brokenLines(c).some((l) => l['policy_id'] === valid)).toBe(false);
    await c.sql.exec("DELETE FROM auth_policies WHERE description = 'by hand'");
  });

  const unknownColumn = 'a row naming a column its table lacks is logged once, and denies with 403 naming it';
  byHand(unknownColumn, async () => {
    const c = ctx();
    await setPolicies(c, [{ table_name: 'notes', action: 'read', expression: '' }]);
    const id = await insertByHand(c, 'notes', 'update', 'owner = auth_user.id');
    const logged = await waitForBroken(c, new RegExp(`^policy ${id} `));
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({
      policy_id: id,
      table_name: 'notes',
      action: 'update',
      error: "column 'owner' does not exist in table 'notes' at 1:1",
    });
    const patched = await c.http.patch('/notes/1', { body: 'changed' }, c.alice.auth);
    expectStatus(patched, 403);
    expect(patched.text).toContain('owner');
    await c.sql.exec("DELETE FROM auth_policies WHERE description = 'by hand'");
  });
});
