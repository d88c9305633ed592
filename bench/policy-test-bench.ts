// `npm run bench:policy-test` (after `npm run build`): the wall time of `rest policy test` on a file
// of 200 cases — the command as a user runs it, process start included — on SQLite (portable path)
// and on PostgreSQL with both paths (the default), median of a few runs. The targets: under 2 s on
// SQLite, under 5 s on PostgreSQL.

import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const cli = join(repoRoot, 'dist/cli/main.js');
const CASES = 200;
const RUNS = 5;
const DDL = 'CREATE TABLE notes (id integer PRIMARY KEY, user_id integer, title varchar(100))';

/** Reads, a PostgREST-dialect read, a refusal and writes, in turn; every case passes. */
function benchFile(): string {
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
  const cases = Array.from({ length: CASES }, (_, i) => kinds[i % kinds.length]?.(i) ?? '');
  return `fixtures:
  users: [{name: alice}, {name: bob}]
  rows:
    notes: [{id: 1, user_id: alice, title: a}, {id: 2, user_id: bob, title: b}]
policies:
  - {table: notes, action: all, expression: "user_id = auth_user.id"}
cases:
${cases.join('\n')}
`;
}

const rest = (url: string, args: readonly string[]): string =>
  execFileSync(process.execPath, [cli, '-db.url', url, ...args], {
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] },
  });

function timeRuns(url: string, file: string): { median: number; runs: number[]; summary: string } {
  const runs: number[] = [];
  let summary = '';
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    summary = rest(url, ['policy', 'test', file]).trim();
    runs.push(performance.now() - start);
  }
  const sorted = [...runs].sort((a, b) => a - b);
  return { median: sorted[Math.floor(sorted.length / 2)] ?? 0, runs, summary };
}

const line = (what: string, target: number, r: ReturnType<typeof timeRuns>): string =>
  `${what.padEnd(34)} median ${(r.median / 1000).toFixed(2)} s (target < ${target} s; runs ${r.runs.map((t) => (t / 1000).toFixed(2)).join(', ')}) — ${r.summary}`;

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { 'pg-url': { type: 'string' } } });
  const pgAdmin = values['pg-url'] ?? process.env['REST_TEST_PG_URL'];
  const dir = mkdtempSync(join(tmpdir(), 'rest-bench-policy-test-'));
  const file = join(dir, 'cases.yml');
  writeFileSync(file, benchFile());
  console.log(`a file of ${CASES} cases, process start included, ${RUNS} runs each`);
  try {
    const sqlitePath = join(dir, 'bench.db');
    const db = new Database(sqlitePath);
    db.exec(DDL);
    db.close();
    const sqliteUrl = `sqlite://${sqlitePath}`;
    rest(sqliteUrl, ['auth', 'setup']);
    console.log(line('SQLite (portable)', 2, timeRuns(sqliteUrl, file)));
    if (pgAdmin === undefined) {
      console.log('PostgreSQL: not measured (give --pg-url or REST_TEST_PG_URL)');
      return;
    }
    const name = `rest_bench_pt_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: pgAdmin });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(pgAdmin);
    url.pathname = `/${name}`;
    try {
      const client = new pg.Client({ connectionString: url.toString() });
      await client.connect();
      await client.query(DDL);
      await client.end();
      rest(url.toString(), ['auth', 'setup']);
      console.log(line('PostgreSQL (native + portable)', 5, timeRuns(url.toString(), file)));
    } finally {
      await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
      await admin.end();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
