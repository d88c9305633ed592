// SIGTERM drains (docs/operations.md) with the real `rest` process on every database: 40 requests on 40
// fresh connections (no keep-alive agent), half written just before the signal and half just
// after it, are all answered and stored; the process then exits 0 within 10 s. Ten rounds each.
// Then, on SQLite: a kept-alive connection is still served, and silent connections do not hold it.

import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, get, request } from 'node:http';
import { connect as connectTcp, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/databases.js';
import { describeEachDatabase } from '../../support/each-database.js';
import { openRawSql, type RawSql } from '../../support/server.js';
import { spawnRest } from './rest-process.js';

const ROUNDS = 10;
const CONNECTIONS = 40;

interface Reply {
  readonly status: number;
  readonly connection: string | undefined;
  readonly body: unknown;
}

interface Client {
  /** Writes the request (the connection is already open). */
  send(): void;
  readonly reply: Promise<Reply>;
}

/** A request on a connection of its own, open and connected before `send`, or the connection's error. */
async function connect(port: number, id: number): Promise<Client> {
  const body = JSON.stringify({ id, title: `item ${id}` });
  const req = request({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: '/items',
    agent: false,
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
  });
  const reply = new Promise<Reply>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body: JSON.parse(text) }),
      );
    });
    req.on('error', reject);
  });
  await new Promise<void>((resolve, reject) => {
    req.once('socket', (socket) => socket.once('connect', resolve));
    req.once('error', reject);
  });
  // Awaited by the test; this only keeps an early failure from counting as unhandled.
  reply.catch(() => undefined);
  return { send: () => req.end(body), reply };
}

describeEachDatabase('SIGTERM with requests on fresh connections', (kind) => {
  let db: TestDatabase;
  let sql: RawSql;

  beforeAll(async () => {
    db = await createTestDatabase(kind);
    sql = await openRawSql(db);
    await sql.exec('CREATE TABLE items (id integer PRIMARY KEY, title varchar(40))');
  });
  afterAll(async () => {
    await sql?.close();
    await db?.drop();
  });

  it.each(Array.from({ length: ROUNDS }, (_, i) => i + 1))(
    'round %i: every request is answered and stored, then the process exits 0',
    async (round) => {
      const p = spawnRest(['-db.url', db.url, '-addr', '127.0.0.1:0'], { grace: 'default' });
      const { port } = new URL(await p.started());
      const ids = Array.from({ length: CONNECTIONS }, (_, i) => round * 1000 + i);
      const clients = await Promise.all(ids.map((id) => connect(Number(port), id)));
      const [before, after] = [clients.slice(0, CONNECTIONS / 2), clients.slice(CONNECTIONS / 2)];
      before.forEach((c) => c.send());
      const exit = p.stop('SIGTERM');
      after.forEach((c) => c.send());

      const replies = await Promise.allSettled(clients.map((c) => c.reply));
      const failures = replies.flatMap((r) => (r.status === 'rejected' ? [String(r.reason)] : []));
      expect(failures).toEqual([]);
      expect(
        replies.map((r) => (r.status === 'fulfilled' ? [r.value.status, r.value.connection] : [])),
      ).toEqual(ids.map(() => [201, 'close']));
      const done = await exit;
      expect([done.code, done.stderr]).toEqual([0, '']);
      expect(done.ms).toBeLessThan(10_000);
      const stored = await sql.rows(
        `SELECT id FROM items WHERE id >= ${round * 1000} AND id < ${(round + 1) * 1000} ORDER BY id`,
      );
      expect(stored.map((r) => Number(r['id']))).toEqual(ids);
    },
  );
});

describe('SIGTERM and kept-alive or silent connections [sqlite]', () => {
  let dir: string;
  let dbUrl: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'rest-drain-'));
    const file = join(dir, 'app.db');
    const db = new Database(file);
    db.exec("CREATE TABLE items (id INTEGER PRIMARY KEY, title TEXT); INSERT INTO items VALUES (1, 'one')");
    db.close();
    dbUrl = `sqlite://${file}`;
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const getItems = (
    port: string,
    agent: Agent,
  ): Promise<{ status: number; connection: string | undefined; reused: boolean }> =>
    new Promise((resolve, reject) => {
      const req = get({ host: '127.0.0.1', port, path: '/items', agent }, (res) => {
        res.resume().on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            connection: res.headers.connection,
            reused: req.reusedSocket,
          }),
        );
      });
      req.on('error', reject);
    });

  it('a request on a kept-alive connection, sent once the signal is handled, is answered with Connection: close', async () => {
    const p = spawnRest(['-db.url', dbUrl, '-addr', '127.0.0.1:0'], { grace: 'default' });
    const { port } = new URL(await p.started());
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    expect(await getItems(port, agent)).toEqual({ status: 200, connection: 'keep-alive', reused: false });
    const exit = p.stop('SIGTERM');
    await p.waitForLine((l) => l.includes('"SIGTERM: '));
    expect(await getItems(port, agent)).toEqual({ status: 200, connection: 'close', reused: true });
    agent.destroy();
    expect((await exit).code).toBe(0);
  });

  it('connections that never send a request, or never finish one, are closed and the process exits 0', async () => {
    const p = spawnRest(['-db.url', dbUrl, '-addr', '127.0.0.1:0'], {
      env: { REST_SHUTDOWN_GRACE_MS: '1500' },
    });
    const { port } = new URL(await p.started());
    const open = (): Promise<Socket> =>
      new Promise((resolve) => {
        const socket = connectTcp(Number(port), '127.0.0.1', () => resolve(socket));
        socket.on('error', () => undefined);
      });
    const [silent, unfinished] = await Promise.all([open(), open()]);
    unfinished.write(
      'POST /items HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"ti',
    );
    const closed = (s: Socket): Promise<void> => new Promise((resolve) => s.once('close', () => resolve()));
    const bothClosed = Promise.all([closed(silent), closed(unfinished)]);
    const exit = await p.stop('SIGTERM');
    await bothClosed;
    expect([exit.code, exit.stderr]).toEqual([0, '']);
    expect(exit.ms).toBeLessThan(10_000);
  });
});
