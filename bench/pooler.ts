// The pooler lane: rest through PgBouncer in transaction mode (`-db.pooler transaction`, LISTEN on
// `-db.listen_url`) against the same rest connected directly, on both PostgreSQL paths: the owner
// read and the single-row POST of `npm run bench`, in interleaved rounds with the load driver in
// its own process (the order alternating by round, so neither side always runs on a warmer
// machine). Each pair's ratio is pooled ÷ direct in the same round; the lane reports its median.
// `npm run bench` runs it (bench/run.ts); `npm run bench:pooler` runs it alone (bench/pooler-cli.ts).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { restCommand } from './contenders.js';
import { startDriver } from './driver-client.js';
import type { LoadRequest } from './driver-protocol.js';
import { generateBenchData, seededRandom, withDatabaseName } from './generate-data.js';
import { spread, type Spread } from './report-model.js';
import { freePort, oneLine, startServer, type ServerProcess } from './server-process.js';
import { createRequests, mintTokens, readRequests, send } from './workloads.js';

export const POOLER_PATHS = ['rls=off', 'rls=on'] as const;
export type PoolerPath = (typeof POOLER_PATHS)[number];
export const POOLER_WORKLOADS = ['read', 'write'] as const;
export type PoolerWorkload = (typeof POOLER_WORKLOADS)[number];

/** The data the lane serves: small, so it loads in a second; the requests are the bench's own. */
export const POOLER_DATA = { rows: 20_000, users: 200 } as const;

/** The full bench's protocol for this lane (`npm run bench:pooler` defaults to 3 rounds of 5 s). */
export const POOLER_FULL = { rounds: 5, seconds: 5, connections: 16 } as const;
/** `npm run bench -- --smoke --pooler on`: one short round, to prove the lane works. */
export const POOLER_SMOKE = { rounds: 1, seconds: 1, connections: 8 } as const;

export interface PoolerOptions {
  /** A PostgreSQL URL whose user may create databases; the lane's database goes next to it. */
  readonly pgAdminUrl: string;
  /** PgBouncer in transaction mode in front of that PostgreSQL (any database name: it is replaced). */
  readonly bouncerUrl: string;
  /** dist/cli/main.js of the build under test. */
  readonly restCli: string;
  /** The built bench/driver.js. */
  readonly driverScript: string;
  readonly rounds: number;
  readonly seconds: number;
  readonly connections: number;
  readonly readyTimeoutMs?: number;
  /** Progress lines (one per round); none by default. */
  readonly progress?: (line: string) => void;
}

/** One path and workload: req/s per round on each side, and pooled ÷ direct round by round. */
export interface PoolerLane {
  readonly path: PoolerPath;
  readonly workload: PoolerWorkload;
  readonly direct: readonly number[];
  readonly pooled: readonly number[];
  readonly ratio: Spread;
}

export interface PoolerReport {
  /** host:port of the PgBouncer the pooled servers went through. */
  readonly pgbouncer: string;
  readonly rows: number;
  readonly users: number;
  readonly rounds: number;
  readonly seconds: number;
  readonly connections: number;
  readonly lanes: readonly PoolerLane[];
}

const secret = 'pooler-bench-secret-of-at-least-32-bytes!';

/** host:port of a URL: what the report names, never a user or a password. */
export const hostOf = (url: string): string => {
  try {
    return new URL(url).host;
  } catch {
    return 'an unparsable URL';
  }
};

/** undefined when PgBouncer answers `SELECT 1` through `url`; otherwise why not, in one line. */
export async function poolerUnreachable(url: string): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (e) {
    const message = e instanceof Error ? e.message || e.name : String(e);
    return `PgBouncer at ${hostOf(url)} is not reachable: ${oneLine(message, 200)}`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function serve(
  options: PoolerOptions,
  label: string,
  dbUrl: string,
  rls: 'on' | 'off',
  extra: readonly string[],
): Promise<ServerProcess> {
  const command = restCommand(
    { restCli: options.restCli, secret },
    label,
    rls,
    extra,
  )(dbUrl, await freePort());
  return startServer({ ...command, env: { REST_LOG_LEVEL: 'warn' } }, options.readyTimeoutMs ?? 30_000);
}

/** Starts the four servers on a fresh database, times the rounds, stops and drops everything. */
export async function measurePooler(options: PoolerOptions): Promise<PoolerReport> {
  const dir = mkdtempSync(join(tmpdir(), 'rest-pooler-bench-'));
  const servers: ServerProcess[] = [];
  try {
    const data = await generateBenchData({ pgAdminUrl: options.pgAdminUrl, dir, shape: POOLER_DATA });
    try {
      const driver = await startDriver(options.driverScript);
      try {
        const pooled = withDatabaseName(options.bouncerUrl, data.pgDatabase);
        const poolerFlags = ['-db.pooler', 'transaction', '-db.listen_url', data.pgUrl];
        const first = await serve(options, 'direct rls=off', data.pgUrl, 'off', []);
        servers.push(first);
        const setup = await send(first.baseUrl, { method: 'POST', path: '/auth/setup', headers: {} });
        if (setup.status !== 201) throw new Error(`POST /auth/setup answered ${setup.status}`);
        const sides = async (path: PoolerPath, direct: ServerProcess) => {
          const rls = path === 'rls=on' ? 'on' : 'off';
          const server = await serve(options, `PgBouncer ${path}`, pooled, rls, poolerFlags);
          servers.push(server);
          return { path, direct, pooled: server };
        };
        const offPair = await sides('rls=off', first);
        const directOn = await serve(options, 'direct rls=on', data.pgUrl, 'on', []);
        servers.push(directOn);
        const pairs = [offPair, await sides('rls=on', directOn)];
        const tokens = await mintTokens(
          secret,
          Array.from({ length: POOLER_DATA.users }, (_, i) => i + 1),
        );
        const workloads: ReadonlyArray<{ name: PoolerWorkload; requests: readonly LoadRequest[] }> = [
          { name: 'read', requests: readRequests(tokens, seededRandom(11)) },
          { name: 'write', requests: createRequests(tokens, seededRandom(13), 'seed') },
        ];
        const run = async (server: ServerProcess, requests: readonly LoadRequest[]): Promise<number> => {
          const [result] = await driver.run([
            {
              label: 'load',
              baseUrl: server.baseUrl,
              connections: options.connections,
              window: { kind: 'seconds', seconds: options.seconds },
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
        const samples = pairs.flatMap((pair) =>
          workloads.map((w) => ({ pair, w, direct: [] as number[], pooled: [] as number[] })),
        );
        for (let round = 0; round < options.rounds; round += 1) {
          for (const s of samples) {
            const order = round % 2 === 0 ? (['direct', 'pooled'] as const) : (['pooled', 'direct'] as const);
            for (const side of order) s[side].push(await run(s.pair[side], s.w.requests));
          }
          options.progress?.(`round ${round + 1}/${options.rounds} done`);
        }
        return {
          pgbouncer: hostOf(options.bouncerUrl),
          rows: POOLER_DATA.rows,
          users: POOLER_DATA.users,
          rounds: options.rounds,
          seconds: options.seconds,
          connections: options.connections,
          lanes: samples.map((s) => ({
            path: s.pair.path,
            workload: s.w.name,
            direct: s.direct,
            pooled: s.pooled,
            ratio: spread(s.pooled.map((p, i) => p / (s.direct[i] ?? Number.NaN))),
          })),
        };
      } finally {
        await driver.close();
      }
    } finally {
      for (const s of servers) await s.stop();
      await data.drop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The table `npm run bench:pooler` prints: each pair's medians, the median ratio and each round's. */
export function poolerTable(report: PoolerReport): readonly string[] {
  return [
    `| path, workload | direct req/s | PgBouncer req/s | ratio (median of ${report.rounds}) | rounds |`,
    '| --- | ---: | ---: | ---: | --- |',
    ...report.lanes.map((l) => {
      const ratios = l.pooled.map((p, i) => p / (l.direct[i] ?? 1));
      return `| ${l.path} ${l.workload} | ${spread(l.direct).median.toFixed(0)} | ${spread(l.pooled).median.toFixed(0)} | ${l.ratio.median.toFixed(2)}× | ${ratios.map((r) => r.toFixed(2)).join(', ')} |`;
    }),
  ];
}
