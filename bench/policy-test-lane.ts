// The policy-test lane (docs/policy-tests.md): `rest policy test` on a file of 200 cases, as a user
// runs it — a process from spawn to exit, process start included — on SQLite (portable path) and
// on PostgreSQL with both paths (the default), median of a few runs each. Beside it, for reference,
// the same file run in this process through the library (runPolicyTestFile on an open database,
// after one untimed run): what the command costs beyond starting.

import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { loadConfig } from '../cli/config/load-config.js';
import { createAdapter } from '../runtime/db/create-adapter.js';
import { runPolicyTestFile } from '../runtime/policy-test/run-file.js';
import { spread, type Measured, type Spread } from './report-model.js';

export const POLICY_TEST_CASES = 200;

/** The targets: a file of 200 cases within these seconds, process start included. */
export const POLICY_TEST_LIMITS_S = { sqlite: 2, postgres: 5 } as const;
export type PolicyTestDatabase = keyof typeof POLICY_TEST_LIMITS_S;

export interface PolicyTestTiming {
  /** `portable`, or `native + portable` (PostgreSQL runs the file on both paths by default). */
  readonly paths: string;
  /** Wall-clock milliseconds of `rest policy test file.yml`, spawn to exit, over the runs. */
  readonly processMs: Spread;
  /** Milliseconds of runPolicyTestFile in this process on an open database, over the runs. */
  readonly inLibraryMs: Spread;
  /** The command's last line: how many cases passed. */
  readonly summary: string;
}

export interface PolicyTestReport {
  readonly cases: number;
  readonly runs: number;
  readonly sqlite: Measured<PolicyTestTiming>;
  readonly postgres: Measured<PolicyTestTiming>;
}

const DDL = 'CREATE TABLE notes (id integer PRIMARY KEY, user_id integer, title varchar(100))';

/** Reads, a PostgREST-dialect read, a refusal and writes, in turn; every case passes. */
export function policyTestFile(cases = POLICY_TEST_CASES): string {
  const kinds = [
    (i: number) =>
      `  - {as: alice, request: "GET /notes?id=lt.1000", expect: {status: 200, rows: [1]}} # ${i}`,
    () =>
      '  - {as: bob, request: "GET /rest/v1/notes?select=id,title", expect: {status: 200, rows: [2], columns: [id, title]}}',
    () => '  - {as: anonymous, request: "GET /notes", expect: {status: 401}}',
    (i: number) =>
      `  - {as: alice, request: "POST /notes", body: {id: ${1000 + i}, title: n}, expect: {status: 201}}`,
    () => '  - {as: alice, request: "PATCH /notes/1", body: {title: x}, expect: {status: 200, count: 1}}',
  ];
  const lines = Array.from({ length: cases }, (_, i) => kinds[i % kinds.length]?.(i) ?? '');
  return `fixtures:
  users: [{name: alice}, {name: bob}]
  rows:
    notes: [{id: 1, user_id: alice, title: a}, {id: 2, user_id: bob, title: b}]
policies:
  - {table: notes, action: all, expression: "user_id = auth_user.id"}
cases:
${lines.join('\n')}
`;
}

const rest = (cli: string, url: string, args: readonly string[]): string =>
  execFileSync(process.execPath, [cli, '-db.url', url, ...args], {
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] },
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 120_000,
  });

async function timeFile(cli: string, url: string, file: string, text: string, runs: number) {
  const processMs: number[] = [];
  let summary = '';
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    summary = rest(cli, url, ['policy', 'test', file]).trim().split('\n').at(-1) ?? '';
    processMs.push(performance.now() - start);
  }
  const config = loadConfig({ flags: { 'db.url': url }, env: {} });
  const adapter = await createAdapter(config.db.url);
  const inLibraryMs: number[] = [];
  let paths = '';
  try {
    for (let i = 0; i <= runs; i++) {
      const start = performance.now();
      const result = await runPolicyTestFile(text, file, { adapter, config });
      const ms = performance.now() - start;
      if (result.failed > 0)
        throw new Error(`${result.failed} of the file's cases failed in the library run`);
      paths = result.paths.join(' + ');
      if (i > 0) inLibraryMs.push(ms);
    }
  } finally {
    await adapter.close();
  }
  return { paths, processMs: spread(processMs), inLibraryMs: spread(inLibraryMs), summary };
}

async function measured<T>(measure: () => Promise<T>): Promise<Measured<T>> {
  try {
    return { ok: true, value: await measure() };
  } catch (e) {
    const reason = (e instanceof Error ? e.message : String(e)).trim().split('\n').at(-1) ?? '';
    return { ok: false, reason };
  }
}

/**
 * Writes the file and a notes table on a fresh SQLite file and a fresh PostgreSQL database (set up
 * with `rest auth setup`), times the command on each, and drops them; a run where a case fails
 * (exit 4) fails that database's measurement. Run it while nothing else of the bench runs.
 */
export async function measurePolicyTest(options: {
  readonly restCli: string;
  /** A PostgreSQL URL of a user that may create databases; undefined leaves PostgreSQL out. */
  readonly pgAdminUrl: string | undefined;
  readonly runs: number;
}): Promise<PolicyTestReport> {
  const { restCli, pgAdminUrl, runs } = options;
  const dir = mkdtempSync(join(tmpdir(), 'rest-bench-policy-test-'));
  const file = join(dir, 'cases.yml');
  const text = policyTestFile();
  writeFileSync(file, text);
  try {
    const sqlite = await measured(async () => {
      const sqlitePath = join(dir, 'bench.db');
      const db = new Database(sqlitePath);
      db.exec(DDL);
      db.close();
      const url = `sqlite://${sqlitePath}`;
      rest(restCli, url, ['auth', 'setup']);
      return timeFile(restCli, url, file, text, runs);
    });
    const postgres: Measured<PolicyTestTiming> =
      pgAdminUrl === undefined
        ? { ok: false, reason: 'no PostgreSQL URL given (--pg-url or REST_TEST_PG_URL)' }
        : await measured(() =>
            onFreshPostgres(pgAdminUrl, (url) => {
              rest(restCli, url, ['auth', 'setup']);
              return timeFile(restCli, url, file, text, runs);
            }),
          );
    return { cases: POLICY_TEST_CASES, runs, sqlite, postgres };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function onFreshPostgres<T>(pgAdminUrl: string, fn: (url: string) => Promise<T>): Promise<T> {
  const name = `rest_bench_pt_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: pgAdminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(pgAdminUrl);
    url.pathname = `/${name}`;
    try {
      const client = new pg.Client({ connectionString: url.toString() });
      await client.connect();
      await client.query(DDL).finally(() => client.end());
      return await fn(url.toString());
    } finally {
      await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
    }
  } finally {
    await admin.end();
  }
}
