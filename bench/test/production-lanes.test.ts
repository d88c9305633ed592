// The pooler and hostile-load lanes of the bench: their options (on in the full run, off in the
// smoke profile), the pooler target, and their sections of the report — including a report from
// before these lanes existed (the committed results.json), which still renders. Nothing is timed.

import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HostileReport } from '../hostile.js';
import { parseBenchOptions } from '../options.js';
import type { PoolerReport } from '../pooler.js';
import { spread, type BenchReport } from '../report-model.js';
import { renderMarkdown } from '../report-markdown.js';
import { hostileSection, poolerSection } from '../report-production.js';
import { POOLER_MIN_RATIO, poolerTargets } from '../targets.js';

const root = resolve(import.meta.dirname, '..', '..');

const lane = (
  path: 'rls=off' | 'rls=on',
  workload: 'read' | 'write',
  direct: number[],
  pooled: number[],
): PoolerReport['lanes'][number] => ({
  path,
  workload,
  direct,
  pooled,
  ratio: spread(pooled.map((p, i) => p / (direct[i] ?? Number.NaN))),
});

const pooler: PoolerReport = {
  pgbouncer: '127.0.0.1:6432',
  rows: 20_000,
  users: 200,
  rounds: 3,
  seconds: 5,
  connections: 16,
  lanes: [
    lane('rls=off', 'read', [1000, 1000, 1000], [800, 900, 700]),
    lane('rls=off', 'write', [500, 500, 500], [400, 300, 500]),
    lane('rls=on', 'read', [1000, 1000, 1000], [600, 500, 900]),
    lane('rls=on', 'write', [500, 500, 500], [450, 350, 400]),
  ],
};

const hostile: HostileReport = {
  failing: 1000,
  abandoned: 50,
  maxWaiting: 16,
  crowd: 80,
  readSeconds: 3,
  connections: 16,
  rows: [
    {
      target: 'postgres rls=off',
      outcome: {
        ok: true,
        value: {
          failing: { answers: { '400': 334, '403': 333, '409': 333 }, newConnections: 0 },
          abandoned: {
            clearedAfterMs: 120,
            mostRunning: 10,
            rowsWritten: 0,
            readAloneRps: 2000,
            readDuringRps: 1500,
            readDuringBad: 0,
          },
          overloaded: { refused: 54, refusedP50Ms: 3.5, refusedMaxMs: 9.25, other: {} },
        },
      },
    },
    { target: 'mariadb', outcome: { ok: false, reason: 'connect ECONNREFUSED 127.0.0.1:3306' } },
  ],
};

describe('the pooler and hostile-load options', () => {
  it('run both lanes in the full profile and neither in the smoke profile unless asked', () => {
    const full = parseBenchOptions([], {});
    expect([full.pooler, full.hostile]).toEqual([true, true]);
    expect(full.bouncerUrl).toBe('postgres://postgres@127.0.0.1:6432/test');
    expect(full.mysqlUrl).toBe('mysql://root@127.0.0.1:3306/test');
    const smoke = parseBenchOptions(['--smoke'], {});
    expect([smoke.pooler, smoke.hostile]).toEqual([false, false]);
    const asked = parseBenchOptions(['--smoke', '--pooler', 'on', '--hostile', 'on'], {});
    expect([asked.pooler, asked.hostile]).toEqual([true, true]);
  });

  it('take PgBouncer and MariaDB from the environment or the flags; --mysql-url off leaves MariaDB out', () => {
    const env = {
      REST_TEST_PGBOUNCER_URL: 'postgres://u@h:1/d',
      REST_TEST_MYSQL_URL: 'mysql://u@h:2/d',
    };
    expect(parseBenchOptions([], env).bouncerUrl).toBe('postgres://u@h:1/d');
    expect(parseBenchOptions([], env).mysqlUrl).toBe('mysql://u@h:2/d');
    expect(parseBenchOptions(['--pgbouncer-url', 'postgres://x@y:3/z'], env).bouncerUrl).toBe(
      'postgres://x@y:3/z',
    );
    expect(parseBenchOptions(['--mysql-url', 'off'], env).mysqlUrl).toBeUndefined();
    expect(() => parseBenchOptions(['--pooler', 'maybe'], {})).toThrow(/--pooler must be on or off/);
  });
});

describe('poolerTargets', () => {
  it('checks the median pooled ÷ direct ratio of each path and workload against the target', () => {
    const checks = poolerTargets({ ok: true, value: pooler });
    expect(checks).toHaveLength(4);
    expect(checks.map((c) => c.met)).toEqual([true, true, false, true]);
    expect(checks[0]?.target).toContain(`owner read ≥ ${POOLER_MIN_RATIO}×`);
    expect(checks[2]?.measured).toBe('0.60× (0.50–0.90)');
  });

  it('misses every target with the reason when the lane did not run: PgBouncer unreachable, or off', () => {
    const unreachable = poolerTargets({ ok: false, reason: 'PgBouncer at 127.0.0.1:6432 is not reachable' });
    for (const c of unreachable) {
      expect(c.met).toBe(false);
      expect(c.measured).toBe('not run: PgBouncer at 127.0.0.1:6432 is not reachable');
    }
    for (const c of poolerTargets(null)) expect(c.measured).toMatch(/--pooler off/);
  });
});

describe('the report sections', () => {
  it('show each pooler pair with its median ratio and each round', () => {
    const text = poolerSection({ ok: true, value: pooler });
    expect(text).toContain('| rls=on | owner read | 1,000 | 600 | 0.60× (0.50–0.90) | 0.60, 0.50, 0.90 |');
    expect(text).toContain('127.0.0.1:6432');
  });

  it('show the hostile-load figures per path, and a path not measured with its reason', () => {
    const text = hostileSection({ ok: true, value: hostile });
    expect(text).toContain(
      '| postgres rls=off | 0 (334× 400, 333× 403, 333× 409) | 120 (10) | 0.75× (1500 vs 2000 req/s) | 54 (3.5 / 9.3) |',
    );
    expect(text).toContain('| mariadb | not measured: connect ECONNREFUSED 127.0.0.1:3306 |');
  });

  it('say why a lane has no table: not run with the reason, off, or absent from an older report', () => {
    expect(poolerSection({ ok: false, reason: 'PgBouncer is not reachable' })).toContain(
      '**Not run**: PgBouncer is not reachable',
    );
    expect(hostileSection(null)).toContain('Not run (`--hostile off`');
    expect(poolerSection(undefined)).toContain('the report predates this lane');
  });

  it('render a results.json from before these lanes (the committed one) with both sections', () => {
    const report = JSON.parse(readFileSync(join(root, 'bench', 'results.json'), 'utf8')) as BenchReport;
    const older: Record<string, unknown> = { ...report };
    delete older['pooler'];
    delete older['hostile'];
    const markdown = renderMarkdown(older as unknown as BenchReport, 'bench/chart.svg');
    expect(markdown).toContain(
      '## Behind a pooler: PgBouncer in transaction mode\n\nNot measured in this run',
    );
    expect(markdown).toContain('## Under hostile load\n\nNot measured in this run');
    const withLanes = renderMarkdown(
      { ...report, pooler: { ok: true, value: pooler }, hostile: { ok: true, value: hostile } },
      'bench/chart.svg',
    );
    expect(withLanes).toContain('| rls=off | single-row POST |');
    expect(withLanes).toContain('| postgres rls=off | 0 (');
  });
});
