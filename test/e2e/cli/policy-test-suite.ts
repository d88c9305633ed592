// `rest policy test` on one database, called by one test file per database so that the three run
// side by side: the example files of examples/policy-tests pass (both paths on PostgreSQL), a
// failing case exits 4 with what was expected and the explain of the case, a malformed file exits
// 2 with its line and column, JSON and JUnit (checked by an XML parser) hold one entry per case,
// `--path native` needs PostgreSQL, and nothing a file writes stays — after a pass, a failure, or
// a run killed mid-file. These run the command in the test's process (cli/main.ts's `main`, as
// the binary does) except the kill, which needs a process; cli-policy-test.test.ts runs the
// binary for its exit codes and output.

import { readFileSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DialectName } from '../../../compiler/types.js';
import { isAvailable } from '../../support/databases.js';
import { openCliDatabase, suiteName, type CliDatabase } from './cli-fixtures.js';
import { REPO_ROOT, runCliProcess } from './run-cli.js';

const EXAMPLES = join(REPO_ROOT, 'examples/policy-tests');
export const EXAMPLE_FILES = ['seed-patterns.yml', 'relations.yml', 'column-rules.yml'].map((f) =>
  join(EXAMPLES, f),
);
/** The tables the example files use. */
export const EXAMPLE_SCHEMA: readonly string[] = readFileSync(join(EXAMPLES, 'schema.sql'), 'utf8')
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

/** One passing case and one failing case (its line 9, column 5). */
export const FAILING = write(
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
/** A status that is no HTTP status, at line 4 column 22. */
export const MALFORMED = write(
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

/** The checks of a failing run's text report (FAILING). */
export function expectFailingReport(stdout: string): void {
  expect(stdout).toContain(`FAIL ${FAILING}:9:5 carol GET /notes`);
  expect(stdout).toMatch(/expected rows \[10, 11\], got rows \[10\]/);
  expect(stdout).toMatch(/policy \d+: notes all "user_id = auth_user.id"/);
  expect(stdout).toMatch(/decision: filter/);
  expect(stdout).toMatch(/^1 passed, 1 failed/m);
}

/** The checks of a failing run's JSON report (FAILING) on a database of `kind`. */
export function expectFailingJson(stdout: string, kind: DialectName): void {
  const report = JSON.parse(stdout) as {
    passed: number;
    failed: number;
    files: { cases: { passed: boolean; paths: Record<string, unknown> }[] }[];
  };
  expect([report.passed, report.failed]).toEqual([1, 1]);
  expect(report.files[0]?.cases.map((c) => c.passed)).toEqual([true, false]);
  const paths = Object.keys(report.files[0]?.cases[0]?.paths ?? {}).sort();
  expect(paths).toEqual(kind === 'postgres' ? ['native', 'portable'] : ['portable']);
}

/** A test database with auth set up and the example tables: `rest policy test` can run on it. */
export const openPolicyTestDatabase = (kind: DialectName): Promise<CliDatabase> =>
  openCliDatabase(kind, { ddl: EXAMPLE_SCHEMA, authSetup: true });

/** Rows of the tables the files touch, and users: all must be as before every run. */
export const stateOf = async (t: CliDatabase) => ({
  users: await t.count('auth_users'),
  policies: await t.count('auth_policies'),
  notes: await t.count('notes'),
  tasks: await t.count('tasks'),
});

export function describePolicyTest(kind: DialectName): void {
  // A loaded machine runs these slowly; the time is not what they test.
  describe.skipIf(!isAvailable(kind))(suiteName('rest policy test', kind), { timeout: 120_000 }, () => {
    let t: CliDatabase;
    const test = (...args: string[]) => t.rest(['policy', 'test', ...args]);
    let before: Awaited<ReturnType<typeof stateOf>>;

    beforeAll(async () => {
      t = await openPolicyTestDatabase(kind);
      before = await stateOf(t);
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
      expect(await stateOf(t)).toEqual(before);
    });

    it('exits 4 on a failing case, with expected vs got and the explain of the case; nothing stays', async () => {
      const r = await test(FAILING);
      expect(r.code).toBe(4);
      expectFailingReport(r.stdout);
      expect(await stateOf(t)).toEqual(before);
    });

    it('writes JUnit XML that parses, one testcase per case with the failure', async () => {
      const r = await test(FAILING, '--format', 'junit');
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
      const r = await test(FAILING, '--format', 'json');
      expect(r.code).toBe(4);
      expectFailingJson(r.stdout, kind);
    });

    it('exits 2 with the line and column of a malformed file or an unknown user', async () => {
      const bad = await test(MALFORMED);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toBe(`rest: ${MALFORMED}:4:22: \`status\` must be an HTTP status (100–599)\n`);
      const unknown = await test(UNKNOWN_USER);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toMatch(new RegExp(`^rest: ${UNKNOWN_USER}:2:5: user 'zed' does not exist`));
    });

    if (kind === 'postgres') {
      it('--path native or portable runs the file on that path only', async () => {
        for (const path of ['native', 'portable']) {
          const r = await test(FAILING, '--path', path, '--format', 'json');
          expect(r.code).toBe(4);
          const report = JSON.parse(r.stdout) as { files: { cases: { paths: Record<string, unknown> }[] }[] };
          expect(Object.keys(report.files[0]?.cases[0]?.paths ?? {})).toEqual([path]);
        }
        expect(await stateOf(t)).toEqual(before);
      });
    } else {
      it('--path native is a usage error (exit 1) naming the database; nothing runs', async () => {
        const r = await test(FAILING, '--path', 'native');
        expect(r.code).toBe(1);
        expect(r.stdout).toBe('');
        expect(r.stderr).toBe(`rest: --path native needs PostgreSQL; this database is ${kind}\n`);
        expect(await stateOf(t)).toEqual(before);
      });
    }

    it('leaves nothing behind when the process is killed in the middle of a file', async () => {
      const r = await runCliProcess(['-db.url', t.db.url, 'policy', 'test', LONG], { timeoutMs: 2500 });
      expect(r.code).toBeNull();
      expect(await stateOf(t)).toEqual(before);
    });
  });
}
