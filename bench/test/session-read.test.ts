// The session read of the bench: the built-in users and sessions it writes (ids, the
// server's user_stamp), the tokens' claims, the option that turns it on and off, the order of the
// lanes within a round, and the targets that compare it with the external-token read.

import { describe, expect, it } from 'vitest';
import { roundOrder } from '../lane-order.js';
import { parseBenchOptions } from '../options.js';
import type { RoundSample, RoundTrips, ScenarioRow, SessionReport, TeamRow } from '../report-model.js';
import { sessionSection } from '../report-markdown.js';
import {
  jwtClaims,
  mintSessionTokens,
  newSessionId,
  SESSION_TTL_SECONDS,
  sessionClaims,
  sessionRows,
  sessionUserIds,
  sessionUsers,
} from '../sessions.js';
import { evaluateTargets, SESSION_READ_MIN_RATIO, sessionReadTargets } from '../targets.js';
import { userStamp } from '../../runtime/auth/sessions.js';
import { usernameKey } from '../../runtime/auth/usernames.js';

const HASH = '$2b$10$abcdefghijklmnopqrstuuJ0cU1H3f3QPhXbcZ8m7p6Kj1L9hV2a.';

describe('session users', () => {
  it('are the owner read users whose ids setup did not take', () => {
    expect(sessionUserIds([1, 2, 3, 4], new Set([1]))).toEqual([2, 3, 4]);
    expect(sessionUserIds([1, 2, 3], new Set())).toEqual([1, 2, 3]);
    expect(sessionUserIds([1, 2], new Set([1, 2]))).toEqual([]);
  });

  it('get a username and a fresh session id each', () => {
    let n = 0;
    const users = sessionUsers([2, 3], () => `sid${++n}`);
    expect(users).toEqual([
      { userId: 2, username: 'bench_reader_2', sid: 'sid1' },
      { userId: 3, username: 'bench_reader_3', sid: 'sid2' },
    ]);
    for (const u of sessionUsers([1_000_000])) expect(u.username.length).toBeLessThanOrEqual(32);
  });

  it('session ids are 128 random bits in base64url, within the column (varchar 32)', () => {
    const a = newSessionId();
    expect(a).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(newSessionId()).not.toBe(a);
  });
});

describe('sessionRows', () => {
  const users = sessionUsers([2, 3], () => 'x');
  const second = { ...users[1]!, sid: 'second' };
  const rows = sessionRows([...users, second], HASH, 1_000, 60);

  it('writes each user once, with the shared hash and the key the server makes of the username', () => {
    expect(rows.users).toEqual([
      {
        id: 2,
        username: 'bench_reader_2',
        username_key: usernameKey('bench_reader_2'),
        password: HASH,
        is_admin: false,
      },
      {
        id: 3,
        username: 'bench_reader_3',
        username_key: usernameKey('bench_reader_3'),
        password: HASH,
        is_admin: false,
      },
    ]);
  });

  it('stamps every session with userStamp(hash, false) — else the server counts it as revoked', () => {
    expect(rows.sessions.map((s) => s.user_stamp)).toEqual(Array(3).fill(userStamp(HASH, false)));
    expect(rows.sessions.map((s) => [s.id, s.user_id])).toEqual([
      ['x', 2],
      ['x', 3],
      ['second', 3],
    ]);
    for (const s of rows.sessions) expect([s.created_at, s.expires_at]).toEqual([1_000, 61_000]);
  });

  it('lasts longer than any run by default', () => {
    const [s] = sessionRows(users, HASH, 0).sessions;
    expect(s?.expires_at).toBe(SESSION_TTL_SECONDS * 1000);
    expect(SESSION_TTL_SECONDS).toBeGreaterThanOrEqual(3600);
  });
});

describe('session tokens', () => {
  it("carry a login token's claims: user_id, sid, username, is_admin", async () => {
    const [user] = sessionUsers([7], () => 'the-sid');
    expect(sessionClaims(user!)).toEqual({ sid: 'the-sid', username: 'bench_reader_7', is_admin: false });
    const [token] = await mintSessionTokens('secret', [user!]);
    expect(token?.userId).toBe(7);
    expect(jwtClaims(token?.token ?? '')).toMatchObject({
      user_id: 7,
      sid: 'the-sid',
      username: 'bench_reader_7',
      is_admin: false,
    });
  });

  it('jwtClaims reads nothing from a token that is not a JWT', () => {
    expect(jwtClaims('nope')).toBeUndefined();
    expect(jwtClaims('a.!!!.c')).toBeUndefined();
    expect(jwtClaims(`a.${Buffer.from('[1]').toString('base64url')}.c`)).toBeUndefined();
  });
});

describe('--sessions', () => {
  it('is on in the full profile and off in the smoke profile by default', () => {
    expect(parseBenchOptions([], {}).sessions).toBe(true);
    expect(parseBenchOptions(['--smoke'], {}).sessions).toBe(false);
  });

  it('can be turned on for a smoke run and off for a full one', () => {
    expect(parseBenchOptions(['--smoke', '--sessions', 'on'], {}).sessions).toBe(true);
    expect(parseBenchOptions(['--sessions', 'off'], {}).sessions).toBe(false);
  });

  it('accepts only on or off', () => {
    expect(() => parseBenchOptions(['--sessions', 'yes'], {})).toThrow(/--sessions must be on or off/);
  });
});

describe('roundOrder', () => {
  const lanes = [
    { id: 'baseline' },
    { id: 'read P' },
    { id: 'session P', alternate: true },
    { id: 'read R' },
    { id: 'session R', alternate: true },
    { id: 'team P' },
  ];
  const ids = (round: number): string[] => roundOrder(lanes, round).map((l) => l.id);

  it('keeps the order in odd rounds', () => {
    expect(ids(1)).toEqual(lanes.map((l) => l.id));
    expect(ids(3)).toEqual(lanes.map((l) => l.id));
  });

  it('puts an alternating lane before the lane it follows in even rounds', () => {
    expect(ids(2)).toEqual(['baseline', 'session P', 'read P', 'session R', 'read R', 'team P']);
  });

  it('never moves a lane past another alternating one, nor an alternating lane first in line', () => {
    const odd = [{ id: 'a', alternate: true }, { id: 'b', alternate: true }, { id: 'c' }];
    expect(roundOrder(odd, 2).map((l) => l.id)).toEqual(['a', 'b', 'c']);
  });

  it('does not change its input', () => {
    roundOrder(lanes, 2);
    expect(lanes[1]?.id).toBe('read P');
  });
});

const round = (n: number, rps: number): RoundSample => ({
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

const trips = (flights: number, firstPass?: number): RoundTrips => ({
  requests: 400,
  flightsPerRequest: flights,
  messagesPerRequest: 4,
  syncsPerRequest: 1,
  queriesPerRequest: 1,
  newConnections: 0,
  ...(firstPass === undefined ? {} : { firstPass: { requests: 999, flightsPerRequest: firstPass } }),
});

function row(
  contender: ScenarioRow['contender'],
  rps: readonly number[],
  flights: number | null = 1,
): ScenarioRow {
  return {
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
    rounds: rps.map((v, i) => round(i + 1, v)),
    vsBaseline: null,
    roundTrips: flights === null ? null : { ok: true, value: trips(flights) },
  };
}

const sessionRow = (
  contender: ScenarioRow['contender'],
  rps: readonly number[],
  flights: number | null,
  firstPass?: number,
): TeamRow => ({
  ...row(contender, rps, null),
  roundTrips: flights === null ? null : { ok: true, value: trips(flights, firstPass) },
  vsOwnerRead: null,
});

const report = (read: readonly TeamRow[]): SessionReport => ({ users: 999, probes: [], read });

describe('the session read targets', () => {
  const external = [row('rest-pg-portable', [1000, 1000, 1000]), row('rest-pg-rls', [800, 800, 800])];

  it('compare each PostgreSQL path with its own external-token read round by round, and its round trips', () => {
    const sessions = report([
      sessionRow('rest-pg-portable', [970, 940, 990], 1.0, 2.0),
      sessionRow('rest-pg-rls', [720, 760, 800], 1.1),
    ]);
    const [pRps, pTrips, nRps, nTrips] = sessionReadTargets(external, sessions, 'off');
    expect(pRps).toMatchObject({ measured: '0.97× (0.94–0.99)', met: true });
    expect(pRps?.target).toContain(`≥ ${SESSION_READ_MIN_RATIO}×`);
    expect(pTrips).toMatchObject({
      measured: "1.00 vs 1.00 round trips/request (each user's first request: 2.00)",
      met: true,
    });
    expect(nRps).toMatchObject({ measured: '0.95× (0.90–1.00)', met: true });
    expect(nTrips).toMatchObject({ measured: '1.10 vs 1.00 round trips/request', met: false });
  });

  it('are missed just under the ratio', () => {
    const sessions = report([
      sessionRow('rest-pg-portable', [940, 949, 990], 1),
      sessionRow('rest-pg-rls', [], 1),
    ]);
    expect(sessionReadTargets(external, sessions, 'off')[0]).toMatchObject({
      measured: '0.95× (0.94–0.99)',
      met: false,
    });
  });

  it('are missed, with the reason, when the session read failed, was not measured or did not run', () => {
    const failed: TeamRow = {
      ...sessionRow('rest-pg-rls', [], 1),
      outcome: { ok: false, reason: 'probe: a revoked session still read after 3000 ms' },
    };
    const [, pTrips, nRps, nTrips] = sessionReadTargets(
      external,
      report([sessionRow('rest-pg-portable', [1000, 1000, 1000], null), failed]),
      'off',
    );
    expect(pTrips).toMatchObject({ met: false, measured: 'not measured' });
    for (const t of [nRps, nTrips])
      expect(t).toMatchObject({
        met: false,
        measured: 'session read failed: probe: a revoked session still read after 3000 ms',
      });
    const off = sessionReadTargets(external, null, 'the session read is off (--sessions off)');
    expect(off).toHaveLength(4);
    for (const t of off)
      expect(t).toMatchObject({ met: false, measured: 'not run: the session read is off (--sessions off)' });
  });

  it('are listed among the targets of a run', () => {
    const login = {
      contender: 'rest-pg-portable',
      users: 1,
      loginConnections: 1,
      readConnections: 1,
      outcome: { ok: false, reason: 'not run' },
    } as const;
    const targets = evaluateTargets(external, [], login, null, undefined, null);
    expect(targets.filter((t) => t.target.includes('session read'))).toHaveLength(4);
  });
});

describe('sessionSection', () => {
  it('says how to turn it on when it did not run', () => {
    expect(sessionSection(null, 3, [])).toContain('Not run (`--sessions off`');
  });

  it('shows each path, its ratios and round trips, and session ÷ external per round', () => {
    const external = [row('rest-pg-portable', [1000, 500], 1.0)];
    const text = sessionSection(
      {
        ...report([{ ...sessionRow('rest-pg-portable', [950, 550], 1.0, 2.01) }]),
        probes: [{ contender: 'rest-pg-portable', outcome: { ok: true, value: 'refused after 25 ms' } }],
      },
      2,
      external,
    );
    expect(text).toContain('one of 999 built-in users');
    expect(text).toContain('- rest-pg-portable: refused after 25 ms');
    expect(text).toContain('| 1 | rest-pg-portable | 1,000 | 950 | 0.95× |');
    expect(text).toContain('| 2 | rest-pg-portable | 500 | 550 | 1.10× |');
    expect(text).toMatch(/\| 1\.00 \(4\.0 msgs\) \| 1\.00 \(4\.0 msgs\) \| 2\.01 \|$/m);
  });
});
