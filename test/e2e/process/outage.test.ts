// Database outage with a real process: a TCP proxy in front of the real database is stopped
// (503 while down, no crash) and started again on the same port (normal answers, no restart).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DialectName } from '../../../compiler/types.js';
import { createTestDatabase, isAvailable, skipReason, type TestDatabase } from '../../support/databases.js';
import { openRawSql } from '../../support/server.js';
import { spawnRest, type RestProcess } from './rest-process.js';
import { TcpProxy } from './tcp-proxy.js';

/** What GET / adds when auth is off. */
const AUTH_OFF_WARNING =
  'auth is off: every table is public, readable and writable by anyone; set -auth.secret (REST_AUTH_SECRET) to protect it';

const KINDS: readonly Exclude<DialectName, 'sqlite'>[] = ['postgres', 'mysql'];

async function get(url: string): Promise<{ status: number; body: unknown }> {
  const r = await fetch(url);
  return { status: r.status, body: await r.json() };
}

async function eventually(probe: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const start = performance.now();
  while (!(await probe())) {
    if (performance.now() - start > timeoutMs) throw new Error(`not recovered within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return performance.now() - start;
}

for (const kind of KINDS) {
  const reason = skipReason(kind);
  describe.skipIf(!isAvailable(kind))(
    `database outage and recovery [${kind}]${reason === undefined ? '' : ` — ${reason}`}`,
    () => {
      let db: TestDatabase;
      let proxy: TcpProxy;
      let rest: RestProcess;
      let url: string;

      beforeAll(async () => {
        db = await createTestDatabase(kind);
        const sql = await openRawSql(db);
        await sql.exec('CREATE TABLE items (id integer PRIMARY KEY, title varchar(20))');
        await sql.exec("INSERT INTO items (id, title) VALUES (1, 'one')");
        await sql.close();
        const target = new URL(db.url);
        proxy = new TcpProxy(target.hostname, Number(target.port || (kind === 'postgres' ? 5432 : 3306)));
        const proxied = new URL(db.url);
        proxied.hostname = '127.0.0.1';
        proxied.port = String(await proxy.start());
        const rls = kind === 'postgres' ? ['-db.rls', 'off'] : [];
        rest = spawnRest(['-db.url', proxied.toString(), ...rls, '-addr', '127.0.0.1:0']);
        url = await rest.started();
      });
      afterAll(async () => {
        if (rest !== undefined && rest.child.exitCode === null) await rest.stop('SIGKILL');
        await proxy?.stop();
        await db?.drop();
      });

      it('answers 503 while the database is down and recovers by itself after it comes back', async () => {
        expect(await get(`${url}/`)).toEqual({
          status: 200,
          body: { status: 'ok', database: kind, auth: false, warning: AUTH_OFF_WARNING },
        });
        expect(await get(`${url}/items`)).toEqual({ status: 200, body: [{ id: 1, title: 'one' }] });

        await proxy.stop();
        const unavailable = { error: { code: 'database_unavailable', message: expect.any(String) } };
        for (const path of ['/', '/items', '/items/1', '/items?count']) {
          expect(await get(`${url}${path}`)).toEqual({ status: 503, body: unavailable });
        }
        const write = await fetch(`${url}/items`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"id":2,"title":"two"}',
        });
        expect(write.status).toBe(503);
        expect(rest.child.exitCode).toBeNull();

        await proxy.start();
        const recoveredMs = await eventually(async () => (await get(`${url}/`)).status === 200, 15_000);
        expect(recoveredMs).toBeLessThan(15_000);
        await eventually(async () => (await get(`${url}/items`)).status === 200, 5_000);
        expect(await get(`${url}/items`)).toEqual({ status: 200, body: [{ id: 1, title: 'one' }] });
        const created = await fetch(`${url}/items`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"id":2,"title":"two"}',
        });
        expect(created.status).toBe(201);

        const exit = await rest.stop('SIGTERM');
        expect(exit.code).toBe(0);
        expect(exit.stderr).toBe('');
        const logged = exit.stdout
          .split('\n')
          .filter((l) => l !== '')
          .map((l) => JSON.parse(l) as { level: number; msg: string });
        expect(logged.some((l) => l.level >= 60)).toBe(false);
      }, 60_000);
    },
  );
}
