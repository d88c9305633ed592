// `-http.max_rows` and `-db.statement_timeout` on the real binary: a bad value from a flag, the
// environment or the YAML file exits 1 with one line quoting it, before any database is opened;
// a good one reaches the server (a POST array over the flag's limit is 413).

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRest, spawnRest } from './rest-process.js';

let dir: string;
let dbUrl: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'rest-limits-'));
  const file = join(dir, 'app.db');
  const db = new Database(file);
  db.exec('CREATE TABLE items (id INTEGER PRIMARY KEY, title TEXT NOT NULL)');
  db.close();
  dbUrl = `sqlite://${file}`;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('limit flags (real process)', () => {
  it.each([
    [['-http.max_rows', '0'], {}, "http.max_rows '0' is not a whole number of rows, at least 1"],
    [['-http.max_rows=many'], {}, "http.max_rows 'many' is not a whole number of rows, at least 1"],
    [[], { REST_HTTP_MAX_ROWS: '-5' }, "http.max_rows '-5' is not a whole number of rows, at least 1"],
    [['-db.max_waiting', 'none'], {}, "db.max_waiting 'none' is not a whole number of requests, at least 1"],
    [
      ['-db.statement_timeout', '10 seconds'],
      {},
      "db.statement_timeout '10 seconds' is not a duration like 10s, 500ms or 1m, a number of seconds, or 0 for no limit, at most 24d",
    ],
    [
      [],
      { REST_DB_STATEMENT_TIMEOUT: '5x' },
      "db.statement_timeout '5x' is not a duration like 10s, 500ms or 1m, a number of seconds, or 0 for no limit, at most 24d",
    ],
  ])('rest %j with env %j exits 1: %s', async (args, env, message) => {
    // The database URL points into a missing directory: the value is refused before it is opened.
    const exit = await runRest(['-db.url', 'sqlite:///no/such/dir/x.db', ...args], { env });
    expect({ code: exit.code, stdout: exit.stdout, stderr: exit.stderr }).toEqual({
      code: 1,
      stdout: '',
      stderr: `rest: ${message}\n`,
    });
  });

  it('a bad value in the YAML file exits 1 naming the setting and the value', async () => {
    const config = join(dir, 'bad.yml');
    writeFileSync(config, 'http: {max_rows: 0}\n');
    const exit = await runRest(['-db.url', dbUrl, '-config', config]);
    expect([exit.code, exit.stderr]).toEqual([
      1,
      "rest: http.max_rows '0' is not a whole number of rows, at least 1\n",
    ]);
  });

  it('-http.max_rows reaches the server: an array over it is 413 too_many_rows, nothing written', async () => {
    const p = spawnRest([
      '-db.url',
      dbUrl,
      '-addr',
      '127.0.0.1:0',
      '-http.max_rows',
      '2',
      '-db.statement_timeout',
      '5s',
    ]);
    try {
      const url = await p.started();
      const post = (n: number) =>
        fetch(`${url}/items`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(Array.from({ length: n }, (_, i) => ({ title: `t${i}` }))),
        });
      const refused = await post(3);
      expect(refused.status).toBe(413);
      expect(await refused.json()).toEqual({
        error: {
          code: 'too_many_rows',
          message: 'a POST may create at most 2 rows at once; this one has 3 (-http.max_rows)',
          details: { rows: 3, max_rows: 2 },
        },
      });
      expect((await post(2)).status).toBe(201);
      expect(await (await fetch(`${url}/items?count`)).json()).toEqual({ count: 2 });
    } finally {
      await p.stop('SIGTERM');
    }
  });
});
