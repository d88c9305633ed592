// `rest policy test` on every database: the example files of examples/policy-tests pass (both
// paths on PostgreSQL), a failing case exits 4 with what was expected and the explain of the case,
// a malformed file exits 2 with its line and column, JSON and JUnit (checked by an XML parser)
// hold one entry per case, and nothing a file writes stays — after a pass, a failure, or a run
// killed mid-file.

import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_KINDS, isAvailable } from '../../support/databases.js';
import { openCliDatabase, suiteName, type CliDatabase } from './cli-fixtures.js';
import { REPO_ROOT, runCliProcess } from './run-cli.js';

const EXAMPLES = join(REPO_ROOT, 'examples/policy-tests');
const EXAMPLE_FILES = ['seed-patterns.yml', 'relations.yml', 'column-rules.yml'].map((f) =>
  join(EXAMPLES, f),
);
const SCHEMA = readFileSync(join(EXAMPLES, 'schema.sql'), 'utf8')
  .replace(/--.*$/gm, '')
  .split(';')
  .map((s) => s.trim())
  .filter((s) => s !== '');

const dir = mkdtempSync(join(tmpdir(), 'rest-policy-test-'));
const write = (name: string, text: string): string => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

const FAILING = write(
  'failing.yml',
  `fixtures:
  users: [{name: carol}]
  rows:
    notes: [{id: 10, user_id: carol, title: c}]
policies:
  - {table: notes, action: all, expression: "user_id = auth_user.id"}
cases:
  - {as: carol, request: "GET /notes", expect: {status: 200, rows: [10]}}
  - {as: carol, request: "GET /notes", expect: {status: 200, rows: [10, 11]}}
`,
);
const MALFORMED = write(
  'malformed.yml',
  'cases:\n  - as: carol\n    request: "GET /notes"\n    expect: {status: "ok"}\n',
);
const UNKNOWN_USER = write(
  'unknown.yml',
  'cases:\n  - {as: zed, request: "GET /notes", expect: {status: 200}}\n',
);
/** Many cases: a run long enough to be killed in the middle. */
const LONG = write(
  'long.yml',
  `fixtures:
  users: [{name: dave}]
  rows:
    notes: [{id: 20, user_id: dave, title: d}]
cases:
${'  - {as: dave, request: "GET /notes", expect: {status: 200}}\n'.repeat(20_000)}`,
);

describe.each(ALL_KINDS)('%s', (kind) => {
  // A loaded machine runs these processes slowly; the time is not what they test.
  describe.skipIf(!isAvailable(kind))(suiteName('rest policy test', kind), { timeout: 120_000 }, () => {
    let t: CliDatabase;
    /** A real process, for what only one shows (exit codes, output, a kill); in-process otherwise. */
    const test = (...args: string[]) =>
      runCliProcess(['-db.url', t.db.url, 'policy', 'test', ...args], { timeoutMs: 90_000 });
    const testHere = (...args: string[]) => t.rest(['policy', 'test', ...args]);
    /** Rows of the tables a file touches, and users: all must be as before every run. */
    const state = async () => ({
      users: await t.count('auth_users'),
      policies: await t.count('auth_policies'),
      notes: await t.count('notes'),
      tasks: await t.count('tasks'),
    });
    let before: Awaited<ReturnType<typeof state>>;

    beforeAll(async () => {
      t = await openCliDatabase(kind);
      for (const ddl of SCHEMA) await t.adapter.exec(ddl);
      expect((await t.rest(['auth', 'setup'])).code).toBe(0);
      before = await state();
    });
    afterAll(async () => {
      await t?.close();
    });

    it('passes the example files and leaves the database as it was', async () => {
      const r = await test(...EXAMPLE_FILES);
      expect(r.stderr).toBe('');
      expect(r.stdout).toMatch(/^91 passed, 0 failed/m);
      expect(r.stdout).toContain(
        kind === 'postgres' ? '(postgres: native + portable)' : `(${kind}: portable)`,
      );
      expect(r.code).toBe(0);
      expect(await state()).toEqual(before);
    });

    it('exits 4 on a failing case, with expected vs got and the explain of the case; nothing stays', async () => {
      const r = await test(FAILING);
      expect(r.code).toBe(4);
      expect(r.stdout).toContain(`FAIL ${FAILING}:9:5 carol GET /notes`);
      expect(r.stdout).toMatch(/expected rows \[10, 11\], got rows \[10\]/);
      expect(r.stdout).toMatch(/policy \d+: notes all "user_id = auth_user.id"/);
      expect(r.stdout).toMatch(/decision: filter/);
      expect(r.stdout).toMatch(/^1 passed, 1 failed/m);
      expect(await state()).toEqual(before);
    });

    it('writes JUnit XML that parses, one testcase per case with the failure', async () => {
      const r = await testHere(FAILING, '--format', 'junit');
      expect(r.code).toBe(4);
      expect(XMLValidator.validate(r.stdout)).toBe(true);
      const doc = new XMLParser({ ignoreAttributes: false }).parse(r.stdout) as {
        testsuites: {
          testsuite: { '@_tests': string; '@_failures': string; testcase: { failure?: unknown }[] };
        };
      };
      const suite = doc.testsuites.testsuite;
      expect(suite['@_tests']).toBe('2');
      expect(suite['@_failures']).toBe('1');
      expect(suite.testcase.map((c) => c.failure !== undefined)).toEqual([false, true]);
    });

    it('writes JSON with one entry per case and the detail of each path', async () => {
      const r = await testHere(FAILING, '--format', 'json');
      expect(r.code).toBe(4);
      const report = JSON.parse(r.stdout) as {
        passed: number;
        failed: number;
        files: { cases: { passed: boolean; paths: Record<string, unknown> }[] }[];
      };
      expect([report.passed, report.failed]).toEqual([1, 1]);
      expect(report.files[0]?.cases.map((c) => c.passed)).toEqual([true, false]);
      const paths = Object.keys(report.files[0]?.cases[0]?.paths ?? {}).sort();
      expect(paths).toEqual(kind === 'postgres' ? ['native', 'portable'] : ['portable']);
    });

    it('exits 2 with the line and column of a malformed file or an unknown user', async () => {
      const bad = await testHere(MALFORMED);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toBe(`rest: ${MALFORMED}:4:22: \`status\` must be an HTTP status (100–599)\n`);
      const unknown = await testHere(UNKNOWN_USER);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toMatch(new RegExp(`^rest: ${UNKNOWN_USER}:2:5: user 'zed' does not exist`));
    });

    it('leaves nothing behind when the process is killed in the middle of a file', async () => {
      const r = await runCliProcess(['-db.url', t.db.url, 'policy', 'test', LONG], { timeoutMs: 2500 });
      expect(r.code).toBeNull();
      expect(await state()).toEqual(before);
    });
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
