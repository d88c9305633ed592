// `rest policy test` as a process (the built binary), for what only a process shows: its exit
// codes 0, 4, 2 and 3 and what it writes to standard output and error, text and JSON. The cases of
// each database, run in the test's process, are in policy-test-suite.ts (one test file per
// database: cli-policy-test-<database>.test.ts).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliDatabase } from './cli-fixtures.js';
import {
  EXAMPLE_FILES,
  FAILING,
  MALFORMED,
  expectFailingJson,
  expectFailingReport,
  openPolicyTestDatabase,
  stateOf,
} from './policy-test-suite.js';
import { runCliProcess } from './run-cli.js';

describe('rest policy test, the process (on sqlite)', { timeout: 120_000 }, () => {
  let t: CliDatabase;
  const test = (...args: string[]) =>
    runCliProcess(['-db.url', t.db.url, 'policy', 'test', ...args], { timeoutMs: 90_000 });
  let before: Awaited<ReturnType<typeof stateOf>>;

  beforeAll(async () => {
    t = await openPolicyTestDatabase('sqlite');
    before = await stateOf(t);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('exits 0 when every case passes, with the summary on standard output', async () => {
    const [first] = EXAMPLE_FILES;
    if (first === undefined) throw new Error('no example file');
    const r = await test(first);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^\d+ passed, 0 failed/m);
    expect(r.stdout).toContain('(sqlite: portable)');
    expect(r.code).toBe(0);
    expect(await stateOf(t)).toEqual(before);
  });

  it('exits 4 on a failing case, with expected vs got and the explain of the case', async () => {
    const r = await test(FAILING);
    expect(r.code).toBe(4);
    expect(r.stderr).toBe('');
    expectFailingReport(r.stdout);
    expect(await stateOf(t)).toEqual(before);
  });

  it('writes JSON alone on standard output with --format json, and exits 4', async () => {
    const r = await test(FAILING, '--format', 'json');
    expect(r.code).toBe(4);
    expect(r.stderr).toBe('');
    expectFailingJson(r.stdout, 'sqlite');
  });

  it('exits 2 with the line and column of a malformed file on standard error', async () => {
    const r = await test(MALFORMED);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`rest: ${MALFORMED}:4:22: \`status\` must be an HTTP status (100–599)\n`);
  });
});

describe('rest policy test without a database', () => {
  it('exits 3 when the database cannot be reached', async () => {
    const r = await runCliProcess([
      '-db.url',
      'postgres://nobody@127.0.0.1:1/none',
      'policy',
      'test',
      FAILING,
    ]);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/^rest: Cannot connect to the PostgreSQL database/);
  });
});
