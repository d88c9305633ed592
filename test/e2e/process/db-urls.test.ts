// Database URLs with the real `rest` process (docs/operations.md "Fail closed"): a PostgreSQL URL's sslmode
// and ssl parameters are honoured (through a TLS front of the test server, which has no SSL
// itself), a failure names the database and says what failed in one line without the password,
// a SQLite file in a missing directory is an error naming it, and a new SQLite file is logged once.

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/databases.js';
import { openRawSql } from '../../support/server.js';
import { PgTlsProxy, TEST_CA } from './pg-tls-proxy.js';
import { runRest, spawnRest, type Exit } from './rest-process.js';

const ADDR = ['-addr', '127.0.0.1:0'];
const SECRET = 'a-secret-that-is-long-enough-0123456789';

function expectOneLine(exit: Exit, code: number, message: string | RegExp): void {
  expect({ code: exit.code, stdout: exit.stdout }).toEqual({ code, stdout: '' });
  expect(exit.stderr).toMatch(/^rest: [^\n]+\n$/);
  if (typeof message === 'string') expect(exit.stderr).toBe(`rest: ${message}\n`);
  else expect(exit.stderr).toMatch(message);
}

describe('PostgreSQL URLs with sslmode / ssl (real process)', () => {
  let db: TestDatabase;
  let proxy: PgTlsProxy;
  /** The test database through the TLS front, as `host`, with `query`. */
  let via: (host: 'localhost' | '127.0.0.1', query: string) => string;

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    const sql = await openRawSql(db);
    await sql.exec('CREATE TABLE items (id integer PRIMARY KEY, title text)');
    await sql.exec("INSERT INTO items VALUES (1, 'one')");
    await sql.close();
    const target = new URL(db.url);
    proxy = new PgTlsProxy(target.hostname, Number(target.port || 5432));
    await proxy.start();
    via = (host, query) => {
      const u = new URL(db.url);
      u.hostname = host;
      u.port = String(proxy.port);
      return `${u.toString()}?${query}`;
    };
  });
  afterAll(async () => {
    await proxy?.stop();
    await db?.drop();
  });

  /** Serves /items through `url` and stops; returns the connections the front saw meanwhile. */
  async function serveOnce(
    url: string,
    env: Record<string, string> = {},
  ): Promise<PgTlsProxy['connections']> {
    const before = { ...proxy.connections };
    const p = spawnRest(['-db.url', url, '-db.rls', 'off', ...ADDR], { env });
    const base = await p.started();
    expect(await (await fetch(`${base}/items`)).json()).toEqual([{ id: 1, title: 'one' }]);
    const exit = await p.stop();
    expect([exit.code, exit.stderr]).toEqual([0, '']);
    return { tls: proxy.connections.tls - before.tls, plain: proxy.connections.plain - before.plain };
  }

  it.each([
    ['sslmode=require (encrypted, not verified)', '127.0.0.1', 'sslmode=require'],
    ['sslmode=prefer (as require: pg cannot fall back)', '127.0.0.1', 'sslmode=prefer'],
    [
      'sslmode=verify-ca with the CA, on any host name',
      '127.0.0.1',
      `sslmode=verify-ca&sslrootcert=${TEST_CA}`,
    ],
    ['sslmode=verify-full with the CA', 'localhost', `sslmode=verify-full&sslrootcert=${TEST_CA}`],
    ['ssl=true with the CA', 'localhost', `ssl=true&sslrootcert=${TEST_CA}`],
  ] as const)('%s: serves over TLS, without a driver warning', async (_name, host, query) => {
    const seen = await serveOnce(via(host, query));
    expect(seen.tls).toBeGreaterThan(0);
    expect(seen.plain).toBe(0);
  });

  it.each([
    ['sslmode=disable', 'sslmode=disable'],
    ['sslmode=allow (as disable: pg cannot fall back)', 'sslmode=allow'],
    ['ssl=false', 'ssl=false'],
  ])('%s: serves without TLS', async (_name, query) => {
    const seen = await serveOnce(via('127.0.0.1', query));
    expect(seen).toEqual({ tls: 0, plain: expect.any(Number) });
    expect(seen.plain).toBeGreaterThan(0);
  });

  it('every connection of the process uses TLS: migrations in auth setup, the pool, LISTEN with native RLS', async () => {
    const before = { ...proxy.connections };
    const url = via('127.0.0.1', 'sslmode=require');
    const setup = await runRest(['-db.url', url, 'auth', 'setup']);
    expect(setup.code).toBe(0);
    const p = spawnRest(['-db.url', url, ...ADDR], { env: { REST_AUTH_SECRET: SECRET } });
    const base = await p.started();
    expect(p.stdoutLines()[p.stdoutLines().length - 1]).toMatch(/auth on, rls on\)"/);
    expect((await fetch(`${base}/items`)).status).toBe(401);
    const exit = await p.stop();
    expect([exit.code, exit.stderr]).toEqual([0, '']);
    expect(proxy.connections.plain).toBe(before.plain);
    expect(proxy.connections.tls).toBeGreaterThan(before.tls + 2);
  });

  it.each([
    [
      'sslmode=verify-full without the CA',
      'localhost',
      'sslmode=verify-full',
      "the server's certificate cannot be verified (name its CA with sslrootcert=<file>, or use sslmode=require to encrypt without verifying)",
    ],
    [
      'ssl=true without the CA',
      'localhost',
      'ssl=true',
      "the server's certificate cannot be verified (name its CA with sslrootcert=<file>, or use sslmode=require to encrypt without verifying)",
    ],
    [
      'sslmode=verify-full for another host name',
      '127.0.0.1',
      `sslmode=verify-full&sslrootcert=${TEST_CA}`,
      "the server's certificate is not for this host name (sslmode=verify-ca checks the CA only)",
    ],
  ] as const)('%s: exit 3, one line naming the database and what failed', async (_name, host, query, why) => {
    const url = via(host, query);
    const exit = await runRest(['-db.url', url, ...ADDR]);
    expectOneLine(exit, 3, `Cannot connect to the PostgreSQL database at ${url}: ${why}.`);
  });

  it('sslmode=require on a server without SSL: exit 3, the database named and "does not support SSL"', async () => {
    const u = new URL(db.url);
    u.password = 'hunter2';
    u.search = 'sslmode=require';
    const exit = await runRest(['-db.url', u.toString(), ...ADDR]);
    u.password = '***';
    expectOneLine(
      exit,
      3,
      `Cannot connect to the PostgreSQL database at ${u.toString()}: the server does not support SSL connections.`,
    );
  });

  it.each([
    [
      'an unknown sslmode',
      'sslmode=requir',
      /^rest: Invalid database URL: sslmode 'requir' is not one of disable, allow, prefer, require, verify-ca, verify-full\.\n$/,
    ],
    [
      'verify-ca without a CA',
      'sslmode=verify-ca',
      /^rest: Invalid database URL: sslmode=verify-ca needs sslrootcert=/,
    ],
    [
      'an unknown ssl value',
      'ssl=yes',
      /^rest: Invalid database URL: ssl 'yes' is not one of true, false, 1, 0, no-verify\.\n$/,
    ],
  ])('%s: exit 1 before connecting', async (_name, query, message) => {
    expectOneLine(
      await runRest(['-db.url', `postgres://u:hunter2@127.0.0.1:1/x?${query}`, ...ADDR]),
      1,
      message,
    );
  });
});

describe('SQLite paths (real process)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'rest-db-urls-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a file in a missing directory: exit 3, one line naming the directory; nothing is created', async () => {
    const missing = join(dir, 'no', 'such');
    const exit = await runRest(['-db.url', `sqlite://${missing}/rest.db`, ...ADDR]);
    expectOneLine(
      exit,
      3,
      `Cannot connect to the SQLite database at sqlite://${missing}/rest.db: the directory ${missing} does not exist (rest creates the file, not its directory).`,
    );
    expect(existsSync(join(dir, 'no'))).toBe(false);
  });

  it('a relative path is named as the absolute directory it resolves to', async () => {
    const exit = await runRest(['-db.url', 'sqlite://./missing/rest.db', ...ADDR], { cwd: dir });
    expectOneLine(
      exit,
      3,
      new RegExp(`: the directory ${join(dir, 'missing').replaceAll('.', '\\.')} does not exist`),
    );
  });

  it('a new file is created and logged once; the next start on it logs nothing about it', async () => {
    const file = join(dir, 'new.db');
    const first = spawnRest(['-db.url', `sqlite://${file}`, ...ADDR]);
    await first.started();
    const created = first.stdoutLines().map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(created[0]).toMatchObject({
      level: 30,
      path: file,
      msg: `created the SQLite database file ${file}`,
    });
    expect(created.filter((l) => String(l['msg']).startsWith('created'))).toHaveLength(1);
    expect((await first.stop()).code).toBe(0);
    expect(existsSync(file)).toBe(true);

    const again = spawnRest(['-db.url', `sqlite://${file}`, ...ADDR]);
    await again.started();
    expect(again.stdoutLines()).toHaveLength(1);
    expect((await again.stop()).code).toBe(0);
  });
});
