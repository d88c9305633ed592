// `npm run bench:pooler`: rest through PgBouncer in transaction mode (`-db.pooler transaction`,
// LISTEN on `-db.listen_url`) against the same rest connected directly, on both PostgreSQL paths:
// the owner read and the single-row POST of `npm run bench`, in interleaved rounds with the load
// driver in its own process. Prints each path's req/s and the pooled/direct ratio (median of the
// rounds; docs/operations.md "Behind a pooler" sets ≥ 0.7× as the target).
//
//   npm run bench:pooler -- [--seconds 5] [--rounds 3] [--connections 16]
// PostgreSQL: REST_TEST_PG_URL (else postgres://postgres@127.0.0.1:5432/postgres); PgBouncer:
// REST_TEST_PGBOUNCER_URL (else postgres://postgres@127.0.0.1:6432/postgres; .ci/pgbouncer.ini).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startDriver } from './driver-client.js';
import type { LoadRequest } from './driver-protocol.js';
import { generateBenchData, seededRandom, withDatabaseName } from './generate-data.js';
import { freePort, startServer, type ServerProcess } from './server-process.js';
import { createRequests, mintTokens, readRequests, send } from './workloads.js';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..', '..');

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '16' },
  },
});
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const connections = Number(values.connections);
const pgAdminUrl = process.env['REST_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const bouncerUrl = process.env['REST_TEST_PGBOUNCER_URL'] ?? 'postgres://postgres@127.0.0.1:6432/postgres';
const secret = 'pooler-bench-secret-of-at-least-32-bytes!';
const USERS = 200;

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
};

async function serve(
  label: string,
  dbUrl: string,
  rls: 'on' | 'off',
  extra: readonly string[],
): Promise<ServerProcess> {
  const port = await freePort();
  const args = [
    join(repoRoot, 'dist', 'cli', 'main.js'),
    'serve',
    '-db.url',
    dbUrl,
    '-addr',
    `127.0.0.1:${port}`,
  ];
  return startServer(
    {
      label,
      args: [...args, '-auth.secret', secret, '-db.rls', rls, ...extra],
      env: { REST_LOG_LEVEL: 'warn' },
      port,
    },
    30_000,
  );
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'rest-pooler-bench-'));
  const data = await generateBenchData({ pgAdminUrl, dir, shape: { rows: 20_000, users: USERS } });
  const servers: ServerProcess[] = [];
  const driver = await startDriver(join(here, 'driver.js'));
  try {
    const pooled = withDatabaseName(bouncerUrl, data.pgDatabase);
    const poolerFlags = ['-db.pooler', 'transaction', '-db.listen_url', data.pgUrl];
    const first = await serve('direct rls=off', data.pgUrl, 'off', []);
    servers.push(first);
    const setup = await send(first.baseUrl, { method: 'POST', path: '/auth/setup', headers: {} });
    if (setup.status !== 201) throw new Error(`POST /auth/setup answered ${setup.status}`);
    const lanes = [
      {
        path: 'rls=off',
        direct: first,
        pooled: await serve('PgBouncer rls=off', pooled, 'off', poolerFlags),
      },
      {
        path: 'rls=on',
        direct: await serve('direct rls=on', data.pgUrl, 'on', []),
        pooled: await serve('PgBouncer rls=on', pooled, 'on', poolerFlags),
      },
    ];
    for (const l of lanes) servers.push(l.pooled, ...(l.direct === first ? [] : [l.direct]));
    const tokens = await mintTokens(
      secret,
      Array.from({ length: USERS }, (_, i) => i + 1),
    );
    const workloads: ReadonlyArray<{ name: string; requests: readonly LoadRequest[] }> = [
      { name: 'read', requests: readRequests(tokens, seededRandom(11)) },
      { name: 'write', requests: createRequests(tokens, seededRandom(13), 'seed') },
    ];
    const samples = new Map<string, { direct: number[]; pooled: number[] }>();
    const run = async (server: ServerProcess, requests: readonly LoadRequest[]): Promise<number> => {
      const [result] = await driver.run([
        {
          label: 'load',
          baseUrl: server.baseUrl,
          connections,
          window: { kind: 'seconds', seconds },
          requests,
        },
      ]);
      if (result === undefined || result.non2xx > 0 || result.errors > 0) {
        throw new Error(
          `${server.baseUrl}: ${JSON.stringify(result?.statusCounts)} errors ${result?.errors}`,
        );
      }
      return result.rps;
    };
    for (let round = 0; round < rounds; round += 1) {
      for (const l of lanes) {
        for (const w of workloads) {
          const key = `${l.path} ${w.name}`;
          const s = samples.get(key) ?? { direct: [], pooled: [] };
          samples.set(key, s);
          // Interleaved, the order alternating by round: neither side always runs on a warmer machine.
          const order = round % 2 === 0 ? (['direct', 'pooled'] as const) : (['pooled', 'direct'] as const);
          for (const side of order) s[side].push(await run(l[side], w.requests));
        }
      }
      process.stderr.write(`round ${round + 1}/${rounds} done\n`);
    }
    console.log(`| path, workload | direct req/s | PgBouncer req/s | ratio (median of ${rounds}) | rounds |`);
    console.log('| --- | ---: | ---: | ---: | --- |');
    for (const [key, s] of samples) {
      const ratios = s.pooled.map((p, i) => p / (s.direct[i] ?? 1));
      console.log(
        `| ${key} | ${median(s.direct).toFixed(0)} | ${median(s.pooled).toFixed(0)} | ${median(ratios).toFixed(2)}× | ${ratios.map((r) => r.toFixed(2)).join(', ')} |`,
      );
    }
  } finally {
    await driver.close();
    for (const s of servers) await s.stop();
    await data.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
