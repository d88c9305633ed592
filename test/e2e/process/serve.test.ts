// The real `rest` process: the startup line, configuration from flags/env/YAML, one-line
// failures with their exit codes, and graceful shutdown on SIGTERM/SIGINT with in-flight requests.

import { request } from 'node:http';
import { createServer } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRest, spawnRest, type Exit } from './rest-process.js';

/** What GET / adds when auth is off. */
const AUTH_OFF_WARNING =
  'auth is off: every table is public, readable and writable by anyone; set -auth.secret (REST_AUTH_SECRET) to protect it';

let dir: string;
let dbUrl: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'rest-process-'));
  const file = join(dir, 'app.db');
  const db = new Database(file);
  db.exec(
    "CREATE TABLE items (id INTEGER PRIMARY KEY, title TEXT NOT NULL); INSERT INTO items (title) VALUES ('one')",
  );
  db.close();
  dbUrl = `sqlite://${file}`;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const STARTUP =
  /^listening on http:\/\/127\.0\.0\.1:(\d+) \(database sqlite, auth (on|off: every table is public), rls off\)$/;

function expectOneLineFailure(exit: Exit, code: number, message: RegExp): void {
  expect({ code: exit.code, stdout: exit.stdout }).toEqual({ code, stdout: '' });
  expect(exit.stderr).toMatch(/^rest: [^\n]+\n$/);
  expect(exit.stderr).toMatch(message);
  expect(exit.stderr).not.toMatch(/\bat .+:\d+:\d+/);
}

describe('rest serve (real process)', () => {
  it('logs exactly one startup line with address, database, auth and rls, serves, and exits 0 on SIGTERM', async () => {
    const p = spawnRest(['-db.url', dbUrl, '-addr', '127.0.0.1:0']);
    const url = await p.started();
    const line = JSON.parse(p.stdoutLines()[0] ?? '{}') as Record<string, unknown>;
    expect(line['msg']).toMatch(STARTUP);
    expect(line).toMatchObject({ database: 'sqlite', auth: 'off', rls: 'off', url });
    expect(await (await fetch(`${url}/`)).json()).toEqual({
      status: 'ok',
      database: 'sqlite',
      auth: false,
      warning: AUTH_OFF_WARNING,
    });
    expect(await (await fetch(`${url}/items`)).json()).toEqual([{ id: 1, title: 'one' }]);
    expect(p.stdoutLines()).toHaveLength(1);
    const exit = await p.stop('SIGTERM');
    expect([exit.code, exit.stderr]).toEqual([0, '']);
    expect(exit.ms).toBeLessThan(3000);
  });

  it('runs as `rest serve` with --flags, takes settings from REST_* and the YAML file, and exits 0 on SIGINT', async () => {
    const config = join(dir, 'rest.yml');
    writeFileSync(
      config,
      `addr: "127.0.0.1:1"\ndb:\n  url: "sqlite://${join(dir, 'ignored.db')}"\ncors: {enabled: true, origins: ["https://app.example"]}\n`,
    );
    const p = spawnRest(['serve', '--addr=127.0.0.1:0'], {
      env: { REST_DB_URL: dbUrl, REST_CONFIG: config },
    });
    const url = await p.started();
    const r = await fetch(`${url}/items`, { headers: { origin: 'https://app.example' } });
    expect(r.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(await r.json()).toEqual([{ id: 1, title: 'one' }]);
    const exit = await p.stop('SIGINT');
    expect(exit.code).toBe(0);
  });

  it('reports auth on when a secret is configured', async () => {
    const secret = 'a-secret-that-is-long-enough-0123456789';
    const p = spawnRest(['-db.url', dbUrl, '-addr=127.0.0.1:0'], { env: { REST_AUTH_SECRET: secret } });
    await p.started();
    expect(p.stdoutLines()[0]).toMatch(/auth on, rls off/);
    const exit = await p.stop();
    expect(exit.code).toBe(0);
    expect(exit.stdout + exit.stderr).not.toContain(secret);
  });

  it('finishes an in-flight request after SIGTERM, refuses new connections, then exits 0', async () => {
    const p = spawnRest(['-db.url', dbUrl, '-addr', '127.0.0.1:0'], { grace: 'default' });
    const { hostname, port } = new URL(await p.started());
    const body = JSON.stringify({ title: 'in flight' });
    const req = request({
      host: hostname,
      port,
      method: 'POST',
      path: '/items',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    });
    const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
      req.on('response', (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      });
      req.on('error', reject);
    });
    req.write(body.slice(0, 5));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const exit = p.stop('SIGTERM');
    await p.waitForLine((l) => l.includes('SIGTERM'));
    await p.waitForLine((l) => l.includes('stopped accepting connections'));
    await expect(fetch(`http://${hostname}:${port}/`)).rejects.toThrow();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(p.child.exitCode).toBeNull();
    req.end(body.slice(5));
    const reply = await response;
    expect([reply.status, JSON.parse(reply.body)]).toEqual([201, { id: 2, title: 'in flight' }]);
    const done = await exit;
    expect([done.code, done.stderr]).toEqual([0, '']);
    expect(done.ms).toBeLessThan(10_000);
  });

  it('exits 0 within 10 s even when an in-flight request never finishes', async () => {
    const p = spawnRest(['-db.url', dbUrl, '-addr', '127.0.0.1:0'], { grace: 'default' });
    const { hostname, port } = new URL(await p.started());
    const req = request({
      host: hostname,
      port,
      method: 'POST',
      path: '/items',
      headers: { 'content-type': 'application/json', 'content-length': 100 },
    });
    req.on('error', () => undefined);
    req.write('{"ti');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const exit = await p.stop('SIGTERM');
    expect(exit.code).toBe(0);
    expect(exit.ms).toBeLessThan(10_000);
    req.destroy();
  }, 20_000);
});

describe('rest startup failures (real process): one line on stderr, no stack, non-zero exit', () => {
  it.each([
    ['a URL with an unknown scheme', ['-db.url', 'oracle://x/y'], 1, /database URL/i],
    ['a URL that is not a URL', ['-db.url', 'not a url'], 1, /database URL/i],
    ['an unreachable PostgreSQL', ['-db.url', 'postgres://127.0.0.1:1/x'], 3, /PostgreSQL|postgres/],
    [
      'an unreachable PostgreSQL with a password',
      ['-db.url', 'postgres://u:too-short-secret@127.0.0.1:1/x'],
      3,
      /PostgreSQL|postgres/,
    ],
    ['an unreachable MariaDB', ['-db.url', 'mysql://root@127.0.0.1:1/x'], 3, /MySQL|MariaDB|mysql/i],
    ['an unknown flag', ['-bogus', 'x'], 1, /Unknown argument: bogus/],
    ['a bad listen address', ['-addr', 'nowhere'], 1, /addr 'nowhere' is not host:port/],
    ['a weak secret', ['-auth.secret', 'too-short-secret'], 1, /at least 32 bytes/],
    ['rls on for SQLite', ['-db.rls', 'on'], 1, /db.rls on needs PostgreSQL/],
    ['a bad token ttl', ['-auth.token_ttl', 'forever'], 1, /auth.token_ttl '[^']*' is not a duration/],
  ])('%s', async (_name, args, code, message) => {
    const exit = await runRest(args.includes('-addr') ? args : [...args, '-addr', '127.0.0.1:0'], {
      cwd: dir,
    });
    expectOneLineFailure(exit, code, message);
    expect(exit.stderr).not.toContain('too-short-secret');
  });

  it.each([
    ['a missing config file', undefined, /config file .*missing\.yml: no such file/],
    ['broken YAML', 'db: {url: [', /invalid YAML at line/],
    ['an unknown setting', 'db: {ulr: "sqlite://x.db"}', /unknown setting db\.ulr/],
  ])('%s', async (_name, text, message) => {
    const file = join(dir, text === undefined ? 'missing.yml' : `bad-${Math.random()}.yml`);
    if (text !== undefined) writeFileSync(file, text);
    expectOneLineFailure(await runRest(['-config', file], { cwd: dir }), 1, message);
  });

  it('an address already in use', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as { port: number };
    try {
      expectOneLineFailure(
        await runRest(['-db.url', dbUrl, '-addr', `127.0.0.1:${port}`]),
        3,
        /already in use/,
      );
    } finally {
      blocker.close();
    }
  });

  it('--help shows usage and an example, exit 0', async () => {
    for (const flag of ['--help', '-help', '-h']) {
      const exit = await runRest([flag]);
      expect(exit.code).toBe(0);
      expect(exit.stdout).toMatch(/Usage: rest/);
      expect(exit.stdout).toMatch(/Examples:\n\s+rest -db\.url /);
      expect(exit.stdout).toContain('-db.url');
    }
  });
});
