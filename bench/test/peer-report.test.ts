import { describe, expect, it } from 'vitest';
import {
  PEER_NATIVE,
  PEER_PORTABLE,
  PEER_REFERENCE,
  parseTrace,
  peerTargets,
  renderPeerReport,
  type PeerRun,
  type PeerScenario,
} from '../peer-report.js';

// The peer targets as `npm run bench:peers` reads them from the peer harness's raw results: ratios
// round by round against Platformatic DB, p99, RSS and the traced round trips.

const run = (variant: string, round: number, rps: number, over: Partial<PeerRun> = {}): PeerRun => ({
  variant,
  round,
  rps,
  p50: 10,
  p99: 20,
  requests: rps * 10,
  non2xx: 0,
  badBody: 0,
  errors: 0,
  peakRssMB: 140,
  serverUsPerReq: 200,
  pgUsPerReq: 250,
  othersBeforePct: 1,
  othersDuringPct: 2,
  ...over,
});

const TRACE = `
### rest-native@node22: 1.00 round trips/request, 7.0 protocol messages/request, 10 connections opened
    LOG:  execute <unnamed>: SELECT 1
### rest-portable@node22: 1.00 round trips/request, 4.0 protocol messages/request, 10 connections opened
### platformatic: 1.01 round trips/request, 4.0 protocol messages/request, 1 connections opened
`;

/** Three rounds: native 1.2× / 1.3× / 1.1× Platformatic, portable 1.25× each round. */
const read: PeerScenario = {
  results: {
    scenario: 'read',
    runs: [1, 2, 3].flatMap((round) => {
      const ref = [1000, 2000, 1000][round - 1] as number;
      const native = [1.2, 1.3, 1.1][round - 1] as number;
      return [
        run(PEER_NATIVE, round, ref * native, { p99: 25 }),
        run(PEER_PORTABLE, round, ref * 1.25, { p99: 18 }),
        run(PEER_REFERENCE, round, ref, { p99: 22, peakRssMB: 320 }),
      ];
    }),
  },
  trips: parseTrace(TRACE),
};

describe('parseTrace', () => {
  it('reads round trips and messages per request of each traced variant', () => {
    const trips = parseTrace(TRACE);
    expect(trips.get(PEER_NATIVE)).toEqual({ roundTrips: 1, messages: 7 });
    expect(trips.get(PEER_REFERENCE)).toEqual({ roundTrips: 1.01, messages: 4 });
    expect(trips.size).toBe(3);
  });
});

describe('peerTargets', () => {
  const targets = peerTargets(read, undefined);
  const find = (text: string) => targets.find((t) => t.target.includes(text));

  it('takes req/s ratios round by round against Platformatic, median with min–max', () => {
    expect(find('reads, rest native RLS ≥ 1.2×')).toEqual(
      expect.objectContaining({ measured: '1.20× (1.10–1.30)', met: true }),
    );
    expect(find('reads, rest portable ≥ 1.3×')).toEqual(
      expect.objectContaining({ measured: '1.25× (1.25–1.25)', met: false }),
    );
  });

  it("compares median p99 with Platformatic's", () => {
    expect(find('rest native RLS: p99')).toEqual(
      expect.objectContaining({ measured: '25.0 ms against 22.0 ms', met: false }),
    );
    expect(find('rest portable: p99')?.met).toBe(true);
  });

  it('misses the write targets when writes were not run, and checks round trips and RSS of what ran', () => {
    expect(
      targets.filter((t) => t.target.startsWith('writes')).every((t) => !t.met && t.measured === 'not run'),
    ).toBe(true);
    expect(find('reads, rest native RLS: one round trip')).toEqual(expect.objectContaining({ met: true }));
    expect(find('rest portable: peak RSS ≤ 160 MB')).toEqual(
      expect.objectContaining({ measured: '140 MB', met: true }),
    );
  });

  it('misses a target whose variant has no round beside Platformatic', () => {
    const lone: PeerScenario = {
      results: { scenario: 'write', runs: [run(PEER_NATIVE, 1, 500)] },
      trips: new Map(),
    };
    const writeTargets = peerTargets(read, lone).filter((t) => t.target.startsWith('writes'));
    expect(writeTargets.find((t) => t.target.includes('native'))).toEqual(
      expect.objectContaining({ measured: 'no common rounds', met: false }),
    );
    expect(writeTargets.find((t) => t.target.includes('round trip'))).toEqual(
      expect.objectContaining({ measured: 'not traced', met: false }),
    );
  });
});

describe('renderPeerReport', () => {
  it('prints each target with its result and a row per variant', () => {
    const text = renderPeerReport(read, undefined, 'Against the peers');
    expect(text).toContain(
      "| reads, rest native RLS ≥ 1.2× Platformatic DB's req/s | 1.20× (1.10–1.30) | met |",
    );
    expect(text).toContain('| rest portable | 1250 (1250–2500) | 1.25× (1.25–1.25) | 10.00 | 18.0 |');
    expect(text).toMatch(/\| Platformatic DB \| 1000 \(1000–2000\) \| 1\.00 \|/);
  });
});
