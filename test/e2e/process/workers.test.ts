// `-workers N` with real processes: N workers serve one listen address, a worker that
// dies is replaced while the others keep serving, SIGTERM drains every worker and exits 0, and a
// worker that cannot start (auth set up but no secret) ends the whole server with its exit code.

import { execFileSync } from 'node:child_process';
import { get } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/databases.js';
import { describeEachServer } from '../../support/each-database.js';
import { runRest, spawnRest, type RestProcess } from './rest-process.js';
import { newSecret } from '../../support/secret.js';

const secret = newSecret();

/** The pids of a process's children (its workers). */
function childrenOf(pid: number): number[] {
  try {
    return execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n')
      .map((s) => Number(s.trim()))
      .filter((n) => n > 0);
  } catch {
    return []; // ps exits 1 when there is none
  }
}

/** GET on a fresh connection: a kept-alive one may belong to the worker just killed. */
function status(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    }).on('error', reject);
  });
}

async function until(check: () => boolean, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
  return true;
}

// Two workers on PGlite's one backend interleave their protocol messages: startup fails or hangs (the
// second case needs the first's setup).
describeEachServer('-workers', (kind) => {
  let db: TestDatabase;
  let server: RestProcess | undefined;
  beforeAll(async () => {
    db = await createTestDatabase(kind);
  });
  afterAll(async () => {
    if (server !== undefined && server.child.exitCode === null) await server.stop('SIGKILL');
    await db?.drop();
  });

  it('two workers serve one address, a dead worker is replaced, SIGTERM drains both and exits 0', async () => {
    server = spawnRest([
      'serve',
      '-db.url',
      db.url,
      '-auth.secret',
      secret,
      '-addr',
      '127.0.0.1:0',
      '-workers',
      '2',
    ]);
    const url = await server.started(30_000);
    await server.waitForLine((l) => l.includes('2 workers are serving'), 30_000);
    const primary = server.child.pid ?? 0;
    expect(childrenOf(primary)).toHaveLength(2);
    expect((await fetch(`${url}/auth/setup`, { method: 'POST' })).status).toBe(201);
    const answers = await Promise.all(Array.from({ length: 20 }, () => status(`${url}/`)));
    expect(answers).toEqual(Array(20).fill(200));

    const before = childrenOf(primary);
    const [victim = 0] = before;
    // A connection the primary handed to the worker as it died is lost with it (a crash);
    // once the primary has seen the death, the survivor and then the replacement serve.
    process.kill(victim, 'SIGKILL');
    await server.waitForLine((l) => l.includes('a worker died'));
    expect(await status(`${url}/`)).toBe(200);
    expect(
      await until(() => {
        const now = childrenOf(primary);
        return now.length === 2 && !now.includes(victim);
      }),
    ).toBe(true);
    const [replacement] = childrenOf(primary).filter((pid) => !before.includes(pid));
    const listening = await server.waitForLine(
      (l) => l.includes(`"pid":${replacement},`) && l.includes('"listening on '),
      10_000,
    );
    expect((JSON.parse(listening) as { url: string }).url).toBe(url);
    const answers2 = await Promise.all(Array.from({ length: 20 }, () => status(`${url}/`)));
    expect(answers2).toEqual(Array(20).fill(200));

    const workers = childrenOf(primary);
    const exit = await server.stop('SIGTERM');
    expect(exit.code).toBe(0);
    expect(exit.stdout).toMatch(/asking every worker to finish its requests/);
    for (const pid of workers) expect(() => process.kill(pid, 0)).toThrow();
  });

  it('a worker that cannot start (auth set up, no secret) ends the server with exit 1', async () => {
    const exit = await runRest(['serve', '-db.url', db.url, '-addr', '127.0.0.1:0', '-workers', '2']);
    expect(exit.code).toBe(1);
    expect(exit.stderr).toMatch(/no auth\.secret is configured/);
    expect(exit.stderr).toMatch(/a worker process could not start \(exit code 1\)/);
  });
});
