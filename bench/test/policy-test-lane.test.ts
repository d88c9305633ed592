// The policy-test lane of `npm run bench`: the file it times, its two targets and its table.
// Nothing here is timed.

import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { POLICY_TEST_CASES, policyTestFile, type PolicyTestReport } from '../policy-test-lane.js';
import type { Measured } from '../report-model.js';
import { policyTestSection, policyTestTargets } from '../report-policy-test.js';

const timing = (processMedianMs: number) => ({
  ok: true as const,
  value: {
    paths: 'portable',
    processMs: { median: processMedianMs, min: processMedianMs - 100, max: processMedianMs + 100 },
    inLibraryMs: { median: 400, min: 380, max: 450 },
    summary: '200 passed',
  },
});
const lane = (sqliteMs: number, postgres: PolicyTestReport['postgres']): Measured<PolicyTestReport> => ({
  ok: true,
  value: { cases: 200, runs: 5, sqlite: timing(sqliteMs), postgres },
});

describe('policyTestFile', () => {
  it('is a file of 200 cases over two users', () => {
    const file = parse(policyTestFile()) as { cases: unknown[]; fixtures: { users: unknown[] } };
    expect(file.cases).toHaveLength(POLICY_TEST_CASES);
    expect(file.fixtures.users).toHaveLength(2);
  });
});

describe('policyTestTargets', () => {
  it('meets SQLite under 2 s and PostgreSQL under 5 s by the median process time', () => {
    const checks = policyTestTargets(lane(1900, timing(5100)));
    expect(checks.map((c) => c.met)).toEqual([true, false]);
    expect(checks[0]?.target).toMatch(/SQLite: under 2 s \(process wall time, start included\)/);
    expect(checks[1]?.target).toMatch(/PostgreSQL, both paths: under 5 s/);
    expect(checks[0]?.measured).toBe('1.90 s (1.80–2.00) over 5 runs; in-library 0.40 s');
  });

  it('misses a target it did not measure, saying why', () => {
    const checks = policyTestTargets(lane(900, { ok: false, reason: 'no PostgreSQL URL given' }));
    expect(checks.map((c) => [c.met, c.measured])).toEqual([
      [true, '0.90 s (0.80–1.00) over 5 runs; in-library 0.40 s'],
      [false, 'not measured: no PostgreSQL URL given'],
    ]);
    for (const c of policyTestTargets(null)) expect(c).toMatchObject({ met: false, measured: /^not run/ });
    expect(policyTestTargets({ ok: false, reason: 'boom' }).map((c) => c.measured)).toEqual([
      'not run: boom',
      'not run: boom',
    ]);
  });
});

describe('policyTestSection', () => {
  it('has a row per database, or says the lane did not run', () => {
    const section = policyTestSection(lane(900, timing(3000)));
    expect(section).toContain('| SQLite | portable | 0.90 s (0.80–1.00) | 0.40 s (0.38–0.45) | < 2 s |');
    expect(section).toContain('| PostgreSQL | portable | 3.00 s (2.90–3.10) | 0.40 s (0.38–0.45) | < 5 s |');
    expect(policyTestSection(null)).toMatch(/Not run in this run \(`--policy-test off`\)/);
    expect(policyTestSection(undefined)).toMatch(/Not measured in this run/);
  });
});
