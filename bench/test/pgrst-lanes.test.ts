// The `/rest/v1` lanes of the bench: the requests they send (the seed read and POST rewritten to
// the PostgREST dialect), the order of the lanes within a round, the option that turns them off,
// the targets that compare them with the seed dialect and the section of the report.

import { describe, expect, it } from 'vitest';
import { ownedRows, seededRandom } from '../generate-data.js';
import { roundOrder } from '../lane-order.js';
import { parseBenchOptions } from '../options.js';
import type { DialectRow, PgrstReport, RoundSample, RoundTrips, ScenarioRow } from '../report-model.js';
import { pgrstSection } from '../report-pgrst.js';
import { evaluateTargets, PGRST_MIN_RATIO, pgrstTargets } from '../targets.js';
import {
  createRequests,
  PGRST_COUNT_HEADERS,
  PGRST_READ_PATH,
  pgrstPath,
  READ_PATH,
  readRequests,
} from '../workloads.js';

describe('pgrstPath', () => {
  it('turns page_size (page 1) into offset 0 and limit, under /rest/v1, keeping order', () => {
    expect(pgrstPath('/items?order=id.asc&page_size=20')).toBe(
      '/rest/v1/items?order=id.asc&offset=0&limit=20',
    );
    expect(PGRST_READ_PATH).toBe(pgrstPath(READ_PATH));
  });

  it('turns a later page into its offset and keeps the filters as they are', () => {
    expect(pgrstPath('/items?page=3&page_size=10&done=eq.true&title=like.a*')).toBe(
      '/rest/v1/items?done=eq.true&title=like.a*&offset=20&limit=10',
    );
  });

  it('leaves a path without paging as it is, under /rest/v1', () => {
    expect(pgrstPath('/items')).toBe('/rest/v1/items');
    expect(pgrstPath('/items?id=eq.4')).toBe('/rest/v1/items?id=eq.4');
  });

  it('refuses paging that is not positive whole numbers', () => {
    expect(() => pgrstPath('/items?page_size=0')).toThrow(/positive whole numbers/);
    expect(() => pgrstPath('/items?page=0&page_size=5')).toThrow(/positive whole numbers/);
    expect(() => pgrstPath('/items?page_size=2.5')).toThrow(/positive whole numbers/);
  });
});

describe('the /rest/v1 requests', () => {
  const tokens = [1, 2, 3, 4, 5].map((userId) => ({ userId, token: `t${userId}` }));

  it('read as the seed read does: same users in the same order, count=exact only where asked', () => {
    const seed = readRequests(tokens, seededRandom(11));
    const pgrst = readRequests(tokens, seededRandom(11), PGRST_READ_PATH);
    const counted = readRequests(tokens, seededRandom(11), PGRST_READ_PATH, PGRST_COUNT_HEADERS);
    expect(pgrst.map((r) => r.headers)).toEqual(seed.map((r) => r.headers));
    expect(counted.map((r) => r.headers)).toEqual(seed.map((r) => ({ ...r.headers, prefer: 'count=exact' })));
    for (const r of [...pgrst, ...counted]) expect([r.method, r.path]).toEqual(['GET', PGRST_READ_PATH]);
  });

  it('POST one row each, the same bodies and tokens; /rest/v1 asks for the created row back', () => {
    const seed = createRequests(tokens, seededRandom(29), 'seed');
    const pgrst = createRequests(tokens, seededRandom(29), 'pgrst');
    expect(seed).toHaveLength(tokens.length);
    expect(pgrst.map((r) => r.body)).toEqual(seed.map((r) => r.body));
    for (const r of seed) {
      expect([r.method, r.path]).toEqual(['POST', '/items']);
      expect(JSON.parse(r.body ?? '')).not.toBeInstanceOf(Array);
    }
    pgrst.forEach((r, i) => {
      expect([r.method, r.path]).toEqual(['POST', '/rest/v1/items']);
      expect(r.headers).toEqual({ ...seed[i]?.headers, prefer: 'return=representation' });
    });
  });
});

describe('ownedRows', () => {
  it('gives every user rows/users rows, one more to the first rows%users users', () => {
    const shape = { rows: 205, users: 10 };
    expect([1, 5, 6, 10].map((u) => ownedRows(shape, u))).toEqual([21, 21, 20, 20]);
    expect(Array.from({ length: 10 }, (_, i) => ownedRows(shape, i + 1)).reduce((a, b) => a + b)).toBe(205);
    expect([0, 11, 1.5].map((u) => ownedRows(shape, u))).toEqual([0, 0, 0]);
  });
});

describe('roundOrder with several lanes after their reference', () => {
  const lanes = [
    { id: 'baseline' },
    { id: 'read P' },
    { id: 'pgrst P', alternate: true },
    { id: 'session P', alternate: true },
    { id: 'count P', alternate: true },
    { id: 'read S' },
    { id: 'pgrst S', alternate: true },
    { id: 'team P' },
  ];
  const ids = (round: number): string[] => roundOrder(lanes, round).map((l) => l.id);

  it('runs each group in reverse every other round, keeping the others where they are', () => {
    expect(ids(1)).toEqual(lanes.map((l) => l.id));
    expect(ids(2)).toEqual([
      'baseline',
      'count P',
      'session P',
      'pgrst P',
      'read P',
      'pgrst S',
      'read S',
      'team P',
    ]);
    expect(ids(4)).toEqual(ids(2));
  });

  it('keeps the /rest/v1 read next to its seed read in both orders', () => {
    for (const round of [1, 2]) {
      const order = ids(round);
      expect(Math.abs(order.indexOf('pgrst P') - order.indexOf('read P'))).toBe(1);
    }
  });
});

describe('--pgrst', () => {
  it('is on by default, in the smoke profile too', () => {
    expect(parseBenchOptions([], {}).pgrst).toBe(true);
    expect(parseBenchOptions(['--smoke'], {}).pgrst).toBe(true);
  });

  it('can be turned off, and accepts only on or off', () => {
    expect(parseBenchOptions(['--pgrst', 'off'], {}).pgrst).toBe(false);
    expect(() => parseBenchOptions(['--pgrst', 'no'], {})).toThrow(/--pgrst must be on or off/);
  });
});

const sample = (n: number, rps: number): RoundSample => ({
  round: n,
  rps,
  p50Ms: 1,
  p99Ms: 2,
  cpuUsPerRequest: null,
  dbCpuUsPerRequest: null,
  responses: 100,
  non2xx: 0,
  errors: 0,
});

const trips = (flights: number, statements?: number): RoundTrips => ({
  requests: 400,
  flightsPerRequest: flights,
  messagesPerRequest: 4,
  syncsPerRequest: 1,
  queriesPerRequest: 0,
  ...(statements === undefined ? {} : { statementsPerRequest: statements }),
  newConnections: 0,
});

const row = (
  contender: ScenarioRow['contender'],
  rps: readonly number[],
  roundTrips: RoundTrips | null = null,
): DialectRow => ({
  contender,
  label: contender,
  outcome: {
    ok: true,
    value: {
      rps: { median: rps[0] ?? 0, min: rps[0] ?? 0, max: rps[0] ?? 0 },
      p50Ms: 1,
      p99Ms: 2,
      cpuUsPerRequest: null,
      dbCpuUsPerRequest: null,
    },
  },
  rounds: rps.map((v, i) => sample(i + 1, v)),
  vsBaseline: null,
  vsSeed: null,
  roundTrips: roundTrips === null ? null : { ok: true, value: roundTrips },
});

const seedRead = [
  row('rest-pg-portable', [1000, 1000, 1000], trips(1, 1)),
  row('rest-pg-rls', [800, 800, 800], trips(1, 2)),
  row('rest-sqlite', [1200, 1200, 1200]),
];

function report(overrides: Partial<PgrstReport> = {}): PgrstReport {
  return {
    requests: {
      seedRead: 'GET /items?order=id.asc&page_size=20',
      read: 'GET /rest/v1/items?order=id.asc&offset=0&limit=20',
      countedRead: 'GET /rest/v1/items?order=id.asc&offset=0&limit=20 with Prefer: count=exact',
      seedCreate: 'POST /items',
      create: 'POST /rest/v1/items with Prefer: return=representation',
    },
    read: [
      row('rest-pg-portable', [960, 990, 1010], trips(1.0025, 1.0025)),
      row('rest-pg-rls', [760, 800, 780], trips(1, 2)),
      row('rest-sqlite', [1200, 1100, 1300]),
    ],
    countedRead: [
      row('rest-pg-portable', [600, 600, 600], trips(1, 1)),
      row('rest-pg-rls', [500, 500, 500], trips(1, 2)),
      row('rest-sqlite', [700, 700, 700]),
    ],
    seedCreate: [
      row('rest-pg-portable', [500, 500, 500], trips(1, 1)),
      row('rest-pg-rls', [400, 400, 400], trips(1, 2)),
      row('rest-sqlite', [300, 300, 300]),
    ],
    create: [
      row('rest-pg-portable', [480, 490, 500], trips(1, 1)),
      row('rest-pg-rls', [370, 380, 392], trips(1, 2)),
      row('rest-sqlite', [300, 310, 290]),
    ],
    ...overrides,
  };
}

const byTarget = (
  checks: readonly { target: string; measured: string; met: boolean }[],
  ...words: string[]
) => checks.filter((c) => words.every((w) => c.target.includes(w)));

describe('the /rest/v1 targets', () => {
  it('compare the read and the POST of every rest contender with the seed dialect round by round', () => {
    const checks = pgrstTargets(seedRead, report(), 'off');
    const reads = byTarget(checks, '`/rest/v1` read ≥');
    expect(reads.map((c) => [c.target.split(':')[0], c.measured, c.met])).toEqual([
      ['rest-pg-portable', '0.99× (0.96–1.01)', true],
      ['rest-pg-rls', '0.97× (0.95–1.00)', true],
      ['rest-sqlite', '1.00× (0.92–1.08)', true],
    ]);
    expect(reads[0]?.target).toContain(`≥ ${PGRST_MIN_RATIO}× the seed dialect's read req/s`);
    const posts = byTarget(checks, 'single-row POST ≥');
    expect(posts.map((c) => [c.measured, c.met])).toEqual([
      ['0.98× (0.96–1.00)', true],
      ['0.95× (0.93–0.98)', true],
      ['1.00× (0.97–1.03)', true],
    ]);
  });

  it('are missed just under the ratio', () => {
    const checks = pgrstTargets(
      seedRead,
      report({ create: [row('rest-pg-portable', [470, 474, 480], trips(1, 1))] }),
      'off',
    );
    expect(byTarget(checks, 'rest-pg-portable', 'POST ≥')[0]).toMatchObject({
      measured: '0.95× (0.94–0.96)',
      met: false,
    });
  });

  it('want one round trip for each /rest/v1 request on both PostgreSQL paths, and none on SQLite', () => {
    const checks = pgrstTargets(seedRead, report(), 'off');
    const one = byTarget(checks, 'one round trip per request');
    expect(one.map((c) => [c.target.split(':')[0], c.measured, c.met])).toEqual([
      ['rest-pg-portable', 'read 1.00; counted read 1.00; POST 1.00', true],
      ['rest-pg-rls', 'read 1.00; counted read 1.00; POST 1.00', true],
    ]);
    const twice = pgrstTargets(
      seedRead,
      report({ countedRead: [row('rest-pg-portable', [600], trips(2, 2))] }),
      'off',
    );
    expect(byTarget(twice, 'rest-pg-portable', 'one round trip')[0]).toMatchObject({
      measured: 'read 1.00; counted read 2.00; POST 1.00',
      met: false,
    });
    expect(byTarget(twice, 'rest-pg-rls', 'one round trip')[0]).toMatchObject({
      measured: 'read 1.00; counted read not measured; POST 1.00',
      met: false,
    });
  });

  it('let count=exact add at most one statement, in the same round trip', () => {
    const count = (flights: number, statements: number | undefined) =>
      byTarget(
        pgrstTargets(
          seedRead,
          report({ countedRead: [row('rest-pg-portable', [600], trips(flights, statements))] }),
          'off',
        ),
        'rest-pg-portable',
        'count=exact',
      )[0];
    expect(count(1, 1)).toMatchObject({
      measured: '1.00 vs 1.00 statements/request, 1.00 round trips/request',
      met: true,
    });
    expect(count(1, 2)).toMatchObject({ met: true });
    expect(count(1, 3)).toMatchObject({
      measured: '3.00 vs 1.00 statements/request, 1.00 round trips/request',
      met: false,
    });
    expect(count(2, 2)).toMatchObject({ met: false });
    expect(count(1, undefined)).toMatchObject({ measured: 'statements not counted', met: false });
  });

  it('are missed, with the reason, when a lane failed or the lanes did not run', () => {
    const failed: DialectRow = {
      ...row('rest-pg-rls', []),
      outcome: { ok: false, reason: 'probe: expected Content-Range 0-19/*' },
    };
    const checks = pgrstTargets(seedRead, report({ read: [failed] }), 'off');
    expect(byTarget(checks, 'rest-pg-rls', 'read ≥')[0]).toMatchObject({
      measured: '/rest/v1 read failed: probe: expected Content-Range 0-19/*',
      met: false,
    });
    expect(byTarget(checks, 'rest-sqlite', 'read ≥')[0]).toMatchObject({
      measured: 'the /rest/v1 read of rest-sqlite did not run',
      met: false,
    });
    const off = pgrstTargets(seedRead, null, 'the /rest/v1 lanes are off (--pgrst off)');
    expect(off).toHaveLength(10);
    for (const t of off)
      expect(t).toMatchObject({ met: false, measured: 'not run: the /rest/v1 lanes are off (--pgrst off)' });
  });

  it('are not among the targets evaluateTargets lists: a run adds them itself', () => {
    const login = {
      contender: 'rest-pg-portable',
      users: 1,
      loginConnections: 1,
      readConnections: 1,
      outcome: { ok: false, reason: 'not run' },
    } as const;
    expect(evaluateTargets(seedRead, [], login).filter((t) => t.target.includes('/rest/v1'))).toEqual([]);
  });
});

describe('pgrstSection', () => {
  it('says how it was left out', () => {
    expect(pgrstSection(null, { read: 1, write: 1 }, [])).toContain('Not run (`--pgrst off`)');
    expect(pgrstSection(undefined, { read: 1, write: 1 }, [])).toContain('predates these lanes');
  });

  it('shows each request beside the seed one, with round trips and statements, and each round', () => {
    const vs = { rps: { median: 0.99, min: 0.96, max: 1.01 }, p99: { median: 1, min: 1, max: 1 } };
    const [, ...others] = report().read;
    const text = pgrstSection(
      report({ read: [{ ...row('rest-pg-portable', [960, 990], trips(1, 1)), vsSeed: vs }, ...others] }),
      { read: 2, write: 1 },
      seedRead,
    );
    expect(text).toContain('`GET /rest/v1/items?order=id.asc&offset=0&limit=20`');
    expect(text).toContain('| rest-pg-portable | seed read | 1,000 (1,000–1,000) | seed |');
    expect(text).toMatch(
      /\| rest-pg-portable \| `\/rest\/v1` read \| 960 \(960–960\) \| 0\.99× \(0\.96–1\.01\) \|.*\| 1\.00 \| 1\.00 \|$/m,
    );
    expect(text).toContain('| 1 | rest-pg-portable | 1,000 | 960 | 0.96× | 600 | 0.60× |');
    expect(text).toContain('| 2 | rest-pg-portable | 1,000 | 990 | 0.99× | 600 | 0.60× |');
    expect(text).toContain('| 1 | rest-pg-rls | 400 | 370 | 0.93× |');
    expect(text).toContain('| rest-sqlite | `/rest/v1` POST | 300 (300–300) | – |');
    expect(text).toMatch(/\| rest-sqlite \| seed read \|.*\| n\/a \(in-process\) \| – \|$/m);
  });
});
