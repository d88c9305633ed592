// The column-rule read lane: the owner read's shape on `col_items`, a copy of `items` whose read
// policies grant columns per row (docs/policy-language.md "Columns") — `done` hidden from every
// caller, `amount` masked: shown in the caller's rows that are done, `null` in the others — so the
// mask is decided row by row. Timed beside the plain owner read of the same contender in the same
// rounds, on both PostgreSQL paths and SQLite.

import Database from 'better-sqlite3';
import type { Measured } from './report-model.js';
import { PAGE_ROWS, withPgClient } from './generate-data.js';
import { READ_PATH, send, type UserToken } from './workloads.js';

export const COLUMN_RULE_TABLE = 'col_items';
export const COLUMN_RULE_READ_PATH = `/${COLUMN_RULE_TABLE}?order=id.asc&page_size=${PAGE_ROWS}`;

/**
 * The owner reads every row of theirs without `amount` and `done`, and `amount` too where the row is
 * done: no row grants `done` (hidden), one of the two grants `amount` under a row condition (masked).
 */
export const COLUMN_RULE_POLICIES = [
  {
    table_name: COLUMN_RULE_TABLE,
    action: 'read',
    expression: 'user_id = auth_user.id',
    columns: '* except (amount, done)',
    description: 'bench: owners read their rows, amount and done left out',
  },
  {
    table_name: COLUMN_RULE_TABLE,
    action: 'read',
    expression: 'user_id = auth_user.id and done = true',
    columns: '* except (done)',
    description: 'bench: owners read the amount of their done rows',
  },
] as const;

/** `col_items`: the same columns, index and rows as `items`, made right after the data is loaded. */
export async function createColumnRuleTable(pgUrl: string, sqliteFile: string): Promise<void> {
  await withPgClient(pgUrl, async (c) => {
    await c.query(`CREATE TABLE ${COLUMN_RULE_TABLE} (LIKE items INCLUDING ALL)`);
    await c.query(`INSERT INTO ${COLUMN_RULE_TABLE} SELECT * FROM items`);
    await c.query(`VACUUM (ANALYZE) ${COLUMN_RULE_TABLE}`);
  });
  const db = new Database(sqliteFile);
  try {
    const ddl = db
      .prepare<[], { sql: string }>("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'items'")
      .get();
    if (ddl === undefined) throw new Error('SQLite has no items table');
    db.exec(ddl.sql.replace(/^CREATE TABLE items/, `CREATE TABLE ${COLUMN_RULE_TABLE}`));
    db.exec(`CREATE INDEX ${COLUMN_RULE_TABLE}_user_id_idx ON ${COLUMN_RULE_TABLE} (user_id)`);
    db.exec(`INSERT INTO ${COLUMN_RULE_TABLE} SELECT * FROM items`);
    db.exec('ANALYZE');
  } finally {
    db.close();
  }
}

type Row = Readonly<Record<string, unknown>>;

/** A row as text with its keys sorted: equal rows, whatever the order of their keys. */
const canonical = (rows: readonly Row[]): string =>
  JSON.stringify(
    rows.map((r) => Object.fromEntries(Object.entries(r).sort(([a], [b]) => a.localeCompare(b)))),
  );

/**
 * Each probed user's masked read is their plain read with `done` gone and `amount` null in the rows
 * not done; over the users, at least one amount shown and one masked (the mask really is per row).
 */
export async function probeColumnRuleReads(
  baseUrl: string,
  users: readonly UserToken[],
): Promise<Measured<{ readonly checks: number }>> {
  let checks = 0;
  let shown = 0;
  let masked = 0;
  try {
    for (const user of users) {
      const headers = { authorization: `Bearer ${user.token}` };
      const plain = await send(baseUrl, { method: 'GET', path: READ_PATH, headers });
      const ruled = await send(baseUrl, { method: 'GET', path: COLUMN_RULE_READ_PATH, headers });
      if (plain.status !== 200 || ruled.status !== 200)
        return {
          ok: false,
          reason: `user ${user.userId}: the reads answered ${plain.status} and ${ruled.status}`,
        };
      const want = (plain.body as readonly Row[]).map(({ done, ...rest }) => {
        if (done === true) shown++;
        else masked++;
        return done === true ? rest : { ...rest, amount: null };
      });
      const got = ruled.body as readonly Row[];
      if (canonical(got) !== canonical(want))
        return {
          ok: false,
          reason: `user ${user.userId}: ${COLUMN_RULE_READ_PATH} answered ${JSON.stringify(got[0] ?? null)}…, expected ${JSON.stringify(want[0] ?? null)}…`,
        };
      checks++;
      const anonymous = await send(baseUrl, { method: 'GET', path: COLUMN_RULE_READ_PATH, headers: {} });
      if (anonymous.status !== 401)
        return { ok: false, reason: `${COLUMN_RULE_READ_PATH} without a token answered ${anonymous.status}` };
      checks++;
    }
  } catch (e) {
    return { ok: false, reason: e instanceof Error ? e.message : String(e) };
  }
  if (shown === 0 || masked === 0)
    return {
      ok: false,
      reason: `the probed rows had ${shown} amounts shown and ${masked} masked: no per-row mask`,
    };
  return { ok: true, value: { checks } };
}
