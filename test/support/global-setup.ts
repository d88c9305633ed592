// Runs once before the suite: in CI every database server must answer; elsewhere a missing
// one is announced loudly — PostgreSQL cases then run on an embedded PGlite (those that need a
// server skip), MariaDB cases skip.

import {
  ALL_KINDS,
  EMBEDDED_PG,
  PG_SERVER_ONLY,
  isAvailable,
  skipReason,
  withMysql,
  withPg,
} from './databases.js';

export async function setup(): Promise<void> {
  const ci = process.env['CI'] === 'true' || process.env['CI'] === '1';
  if (EMBEDDED_PG) {
    if (ci) throw new Error('CI requires every database: REST_TEST_PG_URL is not set');
    console.warn(
      `\n!!! POSTGRESQL: REST_TEST_PG_URL IS NOT SET — ITS CASES RUN ON AN EMBEDDED PGLITE; CASES THAT NEED A SERVER ARE SKIPPED: ${PG_SERVER_ONLY.toUpperCase()} !!!\n`,
    );
  }
  for (const kind of ALL_KINDS) {
    if (!isAvailable(kind)) {
      const reason = skipReason(kind) ?? '';
      if (ci) throw new Error(`CI requires every database: ${reason}`);
      console.warn(`\n!!! ${reason.toUpperCase()} — ITS TEST CASES ARE SKIPPED !!!\n`);
    }
  }
  const pgUrl = process.env['REST_TEST_PG_URL'];
  const myUrl = process.env['REST_TEST_MYSQL_URL'];
  if (pgUrl) await withPg(pgUrl, (c) => c.query('select 1')).catch(unreachable('PostgreSQL', pgUrl));
  if (myUrl) await withMysql(myUrl, (c) => c.query('select 1')).catch(unreachable('MariaDB', myUrl));
}

const unreachable = (what: string, url: string) => (e: unknown) => {
  throw new Error(`${what} at ${url} is unreachable: ${e instanceof Error ? e.message : String(e)}`);
};
