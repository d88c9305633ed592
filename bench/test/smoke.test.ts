// The bench cannot rot: its smoke mode (the built `dist-bench/bench/run.js --smoke`, what
// `npm run bench -- --smoke` runs after building) completes, reports every contender with numbers
// or a failure reason, proves the baseline answers correctly, and drops its database. The round
// trips it reports are proven here too: the counting proxy against known client behaviour.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPgCountingProxy } from '../pg-proxy.js';
import type { BenchReport, ScenarioRow } from '../report-model.js';
import { CONTENDER_IDS } from '../report-model.js';
import { requestRoleName } from '../../runtime/rls/request-role.js';
import { createTestDatabase, withPg, type TestDatabase } from '../../test/support/databases.js';
import { serverDescribe } from '../../test/support/server-only.js';

const root = resolve(import.meta.dirname, '..', '..');
const runScript = join(root, 'dist-bench', 'bench', 'run.js');
const pgUrl = process.env['REST_TEST_PG_URL'] ?? '';

interface Finished {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

let running: ChildProcess | undefined;

/**
 * The smoke profile, whose windows end after a number of requests (a round after 200, a warm-up
 * after 50, the login window after 8 logins: a fraction of a second each), with 8 connections,
 * which a 2-core CI machine serves as fast as 32 without queueing behind the other test files.
 */
const SMOKE_ARGS = ['--smoke', '--connections', '8'];

function runSmoke(outDir: string): Promise<Finished> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [runScript, ...SMOKE_ARGS, '--pg-url', pgUrl, '--out', outDir], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    running = child;
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', fail);
    child.once('exit', (code) => {
      running = undefined;
      done({ code, stdout, stderr });
    });
  });
}

const hasNumbersOrReason = (row: ScenarioRow): boolean =>
  row.outcome.ok
    ? row.outcome.value.rps.median > 0 && row.outcome.value.p99Ms > 0 && row.rounds.length > 0
    : row.outcome.reason.trim().length > 0;

serverDescribe()('bench smoke mode (postgres)', () => {
  let outDir = '';
  let finished: Finished | undefined;
  let report: BenchReport | undefined;

  beforeAll(() => {
    outDir = mkdtempSync(join(tmpdir(), 'rest-bench-smoke-test-'));
  });

  afterAll(async () => {
    // A timed-out run is interrupted like Ctrl-C, so the bench still drops its database.
    const child = running;
    if (child !== undefined) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGINT');
      await exited;
    }
    if (outDir !== '') rmSync(outDir, { recursive: true, force: true });
  }, 60_000);

  it('completes with exit code 0 and writes the report, chart and results to the given directory', async () => {
    expect(existsSync(runScript), `${runScript} is missing: run npm run build first`).toBe(true);
    const started = Date.now();
    finished = await runSmoke(outDir);
    expect(finished.stderr).not.toMatch(/bench failed/);
    expect(finished.code, `${finished.stdout}\n${finished.stderr}`).toBe(0);
    // Seconds on an idle machine; the bound only catches a smoke mode that grew into a real run.
    expect(Date.now() - started).toBeLessThan(150_000);
    report = JSON.parse(readFileSync(join(outDir, 'results.json'), 'utf8')) as BenchReport;
    expect(report.mode).toBe('smoke');
    expect(readFileSync(join(outDir, 'chart.svg'), 'utf8')).toMatch(
      /^<svg [^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/,
    );
    const markdown = readFileSync(join(outDir, 'BENCHMARKS.md'), 'utf8');
    for (const row of report.read) expect(markdown).toContain(`| ${row.label} |`);
    // The pooler and hostile-load lanes are the full run's: off here, and the report says so.
    expect([report.pooler, report.hostile, report.policyTest]).toEqual([null, null, null]);
    expect(markdown).toContain(
      '## Behind a pooler: PgBouncer in transaction mode\n\nNot run (`--pooler off`',
    );
    expect(markdown).toContain('## Under hostile load\n\nNot run (`--hostile off`');
    expect(markdown).toContain('## Policy tests (`rest policy test`, a file of 200 cases)\n\nNot run');
  }, 180_000);

  it('states how much CPU other work used before and after, and warns when it was over 10%', () => {
    const machine = report?.machine;
    expect(machine).toBeDefined();
    if (machine === undefined) return;
    for (const share of [machine.busyShareAtStart, machine.busyShareAtEnd]) {
      expect(share).toBeGreaterThanOrEqual(0);
      expect(share).toBeLessThanOrEqual(1);
    }
    const markdown = readFileSync(join(outDir, 'BENCHMARKS.md'), 'utf8');
    const pct = (share: number): string => `${(share * 100).toFixed(0)}%`;
    expect(markdown).toContain(
      `CPU in use by other work (2 s samples while the bench ran nothing): ${pct(machine.busyShareAtStart)} before, ${pct(machine.busyShareAtEnd)} after`,
    );
    const busy = Math.max(machine.busyShareAtStart, machine.busyShareAtEnd) > 0.1;
    expect(markdown.includes('**The machine was busy during this run**')).toBe(busy);
  });

  it('ended each round after its requests: every round of a contender with numbers answered exactly that many', () => {
    const config = report?.config;
    expect([config?.roundRequests, config?.warmupRequests, config?.loginRequests]).toEqual([200, 50, 8]);
    expect([config?.roundSeconds, config?.warmupSeconds, config?.loginSeconds]).toEqual([null, null, null]);
    const rows = [...(report?.read ?? []), ...(report?.write ?? [])].filter((r) => r.outcome.ok);
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) for (const r of row.rounds) expect(r.responses, row.label).toBe(200);
    const markdown = readFileSync(join(outDir, 'BENCHMARKS.md'), 'utf8');
    expect(markdown).toContain('(1 round of 200 requests after a warm-up of 50 requests per contender)');
    // The round trips are counted over the smoke profile's 40 requests of each kind, and it says so.
    expect(config?.roundTripRequests).toBe(40);
    expect(markdown).toContain('serves 40 requests of each kind after a warm-up');
  });

  it('prints a progress line per round and contender timed', () => {
    expect(report).toBeDefined();
    const timed = report?.read.filter((r) => r.rounds.length > 0) ?? [];
    expect(timed.length).toBeGreaterThan(0);
    for (const row of timed)
      expect(finished?.stdout).toMatch(new RegExp(`\\[read\\] round 1/1\\s+${row.label}\\s+[\\d,]+ req/s`));
  });

  it('has a read row for every contender and a write row for every rest contender, each with numbers or a failure reason', () => {
    expect(report?.read.map((r) => r.contender)).toEqual([...CONTENDER_IDS]);
    expect(report?.write.map((r) => r.contender)).toEqual(CONTENDER_IDS.filter((id) => id !== 'baseline'));
    for (const row of [...(report?.read ?? []), ...(report?.write ?? [])]) {
      expect(hasNumbersOrReason(row), JSON.stringify(row.outcome)).toBe(true);
    }
    const login = report?.login.outcome;
    expect(login?.ok ? login.value.loginsPerSecond > 0 : (login?.reason.length ?? 0) > 0).toBe(true);
    for (const target of report?.targets ?? []) expect(target.measured.length).toBeGreaterThan(0);
  });

  it('passed the baseline correctness probe and timed it with only 2xx answers, in one round trip per request', () => {
    const baseline = report?.contenders.find((c) => c.id === 'baseline');
    expect(baseline?.failure).toBeNull();
    expect(baseline?.readProbe.ok).toBe(true);
    const row = report?.read.find((r) => r.contender === 'baseline');
    expect(row?.outcome.ok).toBe(true);
    expect(row?.rounds.every((r) => r.non2xx === 0 && r.errors === 0 && r.responses > 0)).toBe(true);
    expect(row?.roundTrips?.ok ? row.roundTrips.value.flightsPerRequest : undefined).toBeCloseTo(1, 1);
  });

  it('counts the round trips of each write action on both PostgreSQL paths: one per request', () => {
    const rows = report?.tripsByAction ?? [];
    expect(rows.map((r) => r.contender).sort()).toEqual(['rest-pg-portable', 'rest-pg-rls']);
    for (const row of rows) {
      expect(row.actions.map((a) => a.action)).toEqual(['create', 'create 3 rows', 'update', 'delete']);
      for (const { action, trips } of row.actions) {
        // One flight per request, plus the server's schema version check: at most one flight a
        // second, in the path of the request that finds the last check a second old
        // (runtime/db/schema-cache.ts). A slow window on a busy machine catches two or three of them
        // (1.05–1.08 at 40 requests); a second round trip per request would read 2.
        const flights = trips.ok ? trips.value.flightsPerRequest : Number.NaN;
        expect(flights, `${row.label} ${action}: ${trips.ok ? '' : trips.reason}`).toBeGreaterThanOrEqual(1);
        expect(flights, `${row.label} ${action}`).toBeLessThan(1.2);
      }
    }
    const markdown = readFileSync(join(outDir, 'BENCHMARKS.md'), 'utf8');
    expect(markdown).toContain('| contender | create | create 3 rows | update | delete |');
  });

  it('times the /rest/v1 read, counted read and POST beside the seed ones on every rest contender, one round trip each on PostgreSQL', () => {
    const pgrst = report?.pgrst;
    expect(pgrst).toBeTruthy();
    if (pgrst === undefined || pgrst === null) return;
    const rest = CONTENDER_IDS.filter((id) => id !== 'baseline');
    for (const rows of [pgrst.read, pgrst.countedRead, pgrst.seedCreate, pgrst.create]) {
      expect(rows.map((r) => r.contender)).toEqual(rest);
      for (const row of rows) expect(hasNumbersOrReason(row), JSON.stringify(row.outcome)).toBe(true);
    }
    for (const tag of ['pgrst read', 'pgrst count', 'create', 'pgrst create'])
      for (const row of pgrst.read.filter((r) => r.outcome.ok))
        expect(finished?.stdout).toMatch(
          new RegExp(`\\[${tag}\\] round 1/1\\s+${row.label}\\s+[\\d,]+ req/s`),
        );
    for (const id of ['rest-pg-portable', 'rest-pg-rls'] as const) {
      const of = (rows: readonly ScenarioRow[]) => rows.find((r) => r.contender === id)?.roundTrips;
      const [read, counted, create] = [of(pgrst.read), of(pgrst.countedRead), of(pgrst.create)];
      // One flight per request, give or take the once-a-second schema check (see the write actions).
      for (const trips of [read, counted, create]) {
        const flights = trips?.ok ? trips.value.flightsPerRequest : Number.NaN;
        expect(flights, `${id}: ${JSON.stringify(trips)}`).toBeGreaterThanOrEqual(1);
        expect(flights, id).toBeLessThan(1.2);
      }
      // The count is a window in the read's own statement: no statement of its own.
      const statements = (t: typeof read) => (t?.ok ? t.value.statementsPerRequest : undefined) ?? Number.NaN;
      expect(statements(counted), id).toBeLessThan(statements(read) + 0.2);
      expect(statements(read), id).toBeGreaterThanOrEqual(1);
    }
    const markdown = readFileSync(join(outDir, 'BENCHMARKS.md'), 'utf8');
    expect(markdown).toContain('## The PostgREST dialect (`/rest/v1`) beside the seed dialect');
    expect(report?.targets.filter((t) => t.target.includes('`/rest/v1`'))).toHaveLength(8);
  });

  it('dropped its PostgreSQL database and the request role a -db.rls on server created for it', async () => {
    const name = report?.database.name ?? '';
    expect(name).toMatch(/^rest_bench_[0-9a-f]{12}$/);
    expect(report?.database.dropped).toBe(true);
    const left = await withPg(pgUrl, (c) =>
      c.query(
        `SELECT datname AS name FROM pg_database WHERE datname = $1
         UNION ALL SELECT rolname FROM pg_roles WHERE rolname = $2`,
        [name, requestRoleName(name)],
      ),
    );
    expect(left.rows).toEqual([]);
  });
});

describe(`round trips counted by the bench's proxy (postgres)`, () => {
  let db: TestDatabase | undefined;
  beforeAll(async () => {
    db = await createTestDatabase('postgres');
  });
  afterAll(async () => {
    await db?.drop();
  });

  /** Flights from just before the first statement to after the client said goodbye (Terminate). */
  async function countedFlights(pipeline: boolean, statements: readonly string[]): Promise<number> {
    if (db === undefined) throw new Error('the suite did not start');
    const proxy = await startPgCountingProxy(db.url);
    try {
      const client = new pg.Client({ connectionString: proxy.url, pipeline });
      await client.connect();
      const before = proxy.counts().flights;
      if (pipeline) await Promise.all(statements.map((sql) => client.query(sql)));
      else for (const sql of statements) await client.query(sql);
      await client.end();
      return proxy.counts().flights - before;
    } finally {
      await proxy.close();
    }
  }

  it('counts statements sent one after the other as one round trip each', async () => {
    expect(await countedFlights(false, ['BEGIN', 'SELECT 1', 'SELECT 2', 'COMMIT'])).toBe(4);
  });

  it('counts pipelined statements, sent before any answer, as one round trip', async () => {
    expect(await countedFlights(true, ['BEGIN', 'SELECT 1', 'SELECT 2', 'COMMIT'])).toBe(1);
  });

  it('does not count the connection startup or the closing Terminate', async () => {
    expect(await countedFlights(false, [])).toBe(0);
  });
});
