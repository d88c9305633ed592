// The real `rest` process through PgBouncer in transaction mode (REST_TEST_PGBOUNCER_URL): without
// -db.pooler it exits 1 with one line naming the flag, with it (and -db.listen_url) it sets up auth
// and serves.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestDatabase,
  pgBouncerSkipReason,
  throughPgBouncer,
  type TestDatabase,
} from '../../support/databases.js';
import { openRawSql } from '../../support/server.js';
import { runRest, spawnRest } from './rest-process.js';

const ADDR = ['-addr', '127.0.0.1:0'];
const reason = pgBouncerSkipReason();

describe.skipIf(reason !== undefined)(
  `rest through PgBouncer (real process)${reason === undefined ? '' : ` (skipped: ${reason})`}`,
  () => {
    let db: TestDatabase;
    let pooled: string;
    beforeAll(async () => {
      db = await createTestDatabase('postgres');
      const sql = await openRawSql(db);
      await sql.exec('CREATE TABLE items (id integer PRIMARY KEY, title text)');
      await sql.exec("INSERT INTO items VALUES (1, 'one')");
      await sql.close();
      pooled = throughPgBouncer(db.url);
    });
    afterAll(async () => {
      await db?.drop();
    });

    it('without -db.pooler exits 1 with one line that names the flag', async () => {
      const exit = await runRest(['-db.url', pooled, '-db.rls', 'off', ...ADDR]);
      expect({ code: exit.code, stdout: exit.stdout }).toEqual({ code: 1, stdout: '' });
      expect(exit.stderr).toMatch(
        /^rest: The PostgreSQL database at \S+ looks like a transaction pooler: start with -db\.pooler transaction\n$/,
      );
    });

    it('with -db.pooler transaction and -db.listen_url sets up auth and serves', async () => {
      const flags = ['-db.url', pooled, '-db.pooler', 'transaction', '-db.listen_url', db.url];
      const setup = await runRest([...flags, 'auth', 'setup', '--json']);
      expect(setup.code, setup.stderr).toBe(0);
      const p = spawnRest([...flags, '-db.rls', 'off', '-auth.enabled', 'false', ...ADDR]);
      const base = await p.started();
      expect(await (await fetch(`${base}/items`)).json()).toEqual([{ id: 1, title: 'one' }]);
      const exit = await p.stop();
      expect(exit.code).toBe(0);
    });

    it('auth setup through the pooler without -db.listen_url refuses with one line', async () => {
      const exit = await runRest(['-db.url', pooled, '-db.pooler', 'transaction', 'auth', 'setup']);
      expect(exit.code).toBe(1);
      expect(exit.stderr).toMatch(/^rest: [^\n]*give -db\.listen_url[^\n]*\n$/);
    });
  },
);
