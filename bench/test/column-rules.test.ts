// The column-rule read lane of `npm run bench`: its policies, targets and section. Nothing here is timed.

import { describe, expect, it } from 'vitest';
import { COLUMN_RULE_POLICIES, COLUMN_RULE_READ_PATH } from '../column-rules.js';
import type { Measured, RoundSample, RoundTrips, ScenarioRow, TeamRow } from '../report-model.js';
import { summarize } from '../report-model.js';
import { columnRuleSection, columnRuleTargets, type ColumnRuleReport } from '../report-column-rules.js';

const round = (r: number, rps: number): RoundSample => ({
  round: r,
  rps,
  p50Ms: 5,
  p99Ms: 20,
  cpuUsPerRequest: null,
  dbCpuUsPerRequest: null,
  responses: 1000,
  non2xx: 0,
  errors: 0,
});
const trips = (flights: number): Measured<RoundTrips> => ({
  ok: true,
  value: {
    requests: 400,
    flightsPerRequest: flights,
    messagesPerRequest: 5,
    syncsPerRequest: 1,
    queriesPerRequest: 1,
    newConnections: 0,
  },
});
const LABELS = { 'rest-pg-portable': 'PG off', 'rest-pg-rls': 'PG on', 'rest-sqlite': 'SQLite' } as const;
const plain: ScenarioRow[] = Object.entries(LABELS).map(([id, label]) => ({
  contender: id as keyof typeof LABELS,
  label,
  outcome: { ok: true, value: summarize([round(1, 1000), round(2, 1000)]) },
  rounds: [round(1, 1000), round(2, 1000)],
  vsBaseline: null,
  roundTrips: trips(1),
}));
const row = (id: keyof typeof LABELS, ratio: number, flights: number): TeamRow => ({
  contender: id,
  label: LABELS[id],
  outcome: { ok: true, value: summarize([round(1, 1000 * ratio)]) },
  rounds: [round(1, 1000 * ratio)],
  vsBaseline: null,
  vsOwnerRead: { rps: { median: ratio, min: ratio, max: ratio }, p99: { median: 1, min: 1, max: 1 } },
  roundTrips: id === 'rest-sqlite' ? null : trips(flights),
});
const lane = (rows: readonly TeamRow[]): ColumnRuleReport => ({
  path: COLUMN_RULE_READ_PATH,
  policies: COLUMN_RULE_POLICIES.map(({ expression, columns }) => ({ expression, columns })),
  read: rows,
});

describe('COLUMN_RULE_POLICIES', () => {
  it('grant no row done (hidden) and amount only under a row condition (masked)', () => {
    expect(COLUMN_RULE_POLICIES.every((p) => /except \([^)]*\bdone\b/.test(p.columns))).toBe(true);
    const amount = COLUMN_RULE_POLICIES.filter((p) => !/\bamount\b/.test(p.columns));
    expect(amount.map((p) => p.expression)).toEqual(['user_id = auth_user.id and done = true']);
  });
});

describe('columnRuleTargets', () => {
  it('checks the ratio on every rest contender and one round trip on PostgreSQL', () => {
    const checks = columnRuleTargets(
      plain,
      lane([row('rest-pg-portable', 0.95, 1.0), row('rest-pg-rls', 0.85, 1.2), row('rest-sqlite', 0.9, 0)]),
    );
    expect(checks.map((c) => [c.target, c.met])).toEqual([
      ["PG off: column rules: masked + hidden read ≥ 0.9× the plain read's req/s", true],
      ['PG off: column rules: masked + hidden read in one round trip per request', true],
      ["PG on: column rules: masked + hidden read ≥ 0.9× the plain read's req/s", false],
      ['PG on: column rules: masked + hidden read in one round trip per request', false],
      ["SQLite: column rules: masked + hidden read ≥ 0.9× the plain read's req/s", true],
    ]);
    expect(checks[2]?.measured).toBe('0.85× (0.85–0.85)');
  });

  it('misses every target of a lane that did not run, saying why', () => {
    for (const c of columnRuleTargets(plain, null))
      expect(c).toMatchObject({ met: false, measured: /^not run/ });
    expect(columnRuleTargets(plain, undefined).every((c) => c.measured === 'not measured')).toBe(true);
    const failed = lane([{ ...row('rest-sqlite', 1, 0), outcome: { ok: false, reason: 'probe: boom' } }]);
    const sqlite = columnRuleTargets(plain, failed).find((c) => c.target.startsWith('SQLite'));
    expect(sqlite).toMatchObject({ met: false, measured: 'failed: probe: boom' });
  });
});

describe('columnRuleSection', () => {
  it('names the policies and has a row per contender', () => {
    const section = columnRuleSection(
      lane([row('rest-pg-rls', 0.95, 1.01), row('rest-sqlite', 0.9, 0)]),
      plain,
    );
    expect(section).toContain('- `user_id = auth_user.id and done = true` grants `* except (done)`');
    expect(section).toContain('| PG on | 950 (950–950) | 0.95× (0.95–0.95) | 20.00 | 1.01 | 1.00 |');
    expect(section).toContain('| SQLite | 900 (900–900) | 0.90× (0.90–0.90) | 20.00 | – | – |');
    expect(columnRuleSection(null, plain)).toMatch(/Not run in this run \(`--columns off`\)/);
  });
});
