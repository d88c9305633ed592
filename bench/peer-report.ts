// The peer targets read from a run of the peer harness (`bench/peers/run.sh`): its raw
// result files (one per scenario, interleaved rounds of every variant) and its round-trip traces
// become the same round samples, ratios and target checks as `npm run bench`'s own report.

import {
  ratiosByRound,
  spread,
  summarize,
  timesText as times,
  type RoundSample,
  type TargetCheck,
} from './report-model.js';
import { ONE_ROUND_TRIP } from './targets.js';

/** What the harness's bench.mjs writes for one variant in one round (the fields read here). */
export interface PeerRun {
  readonly variant: string;
  readonly round: number;
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  readonly requests: number;
  readonly non2xx: number;
  readonly badBody: number;
  readonly errors: number;
  readonly peakRssMB: number;
  readonly serverUsPerReq: number | null;
  readonly pgUsPerReq: number | null;
  /** CPU of everything else on the machine, % of all cores: before the round, idle, and during it. */
  readonly othersBeforePct: number;
  readonly othersDuringPct: number;
}

export interface PeerResults {
  readonly scenario: string;
  readonly runs: readonly PeerRun[];
}

/** Round trips and protocol messages per request of one variant, from the harness's trace. */
export interface PeerTrips {
  readonly roundTrips: number;
  readonly messages: number;
}

export const PEER_REFERENCE = 'platformatic';
export const PEER_NATIVE = 'rest-native@node22';
export const PEER_PORTABLE = 'rest-portable@node22';
/** rest's two paths, each measured against PEER_REFERENCE. */
const REST_VARIANTS = [PEER_NATIVE, PEER_PORTABLE] as const;
type RestVariant = (typeof REST_VARIANTS)[number];
export const PEER_VARIANTS = [...REST_VARIANTS, PEER_REFERENCE] as const;

/** The req/s targets against Platformatic DB, by scenario and variant. */
export const PEER_RPS_TARGETS: Readonly<Record<'read' | 'write', Readonly<Record<RestVariant, number>>>> = {
  read: { [PEER_NATIVE]: 1.2, [PEER_PORTABLE]: 1.3 },
  write: { [PEER_NATIVE]: 1.1, [PEER_PORTABLE]: 1.2 },
};
export const PEER_RSS_LIMIT_MB = 160;

const LABELS: Readonly<Record<string, string>> = {
  [PEER_NATIVE]: 'rest native RLS',
  [PEER_PORTABLE]: 'rest portable',
  [PEER_REFERENCE]: 'Platformatic DB',
};
const labelOf = (variant: string): string => LABELS[variant] ?? variant;

/** A harness run as the bench's round sample. */
export function roundSample(run: PeerRun): RoundSample {
  return {
    round: run.round,
    rps: run.rps,
    p50Ms: run.p50,
    p99Ms: run.p99,
    cpuUsPerRequest: run.serverUsPerReq,
    dbCpuUsPerRequest: run.pgUsPerReq,
    responses: run.requests,
    non2xx: run.non2xx + run.badBody,
    errors: run.errors,
  };
}

const roundsOf = (results: PeerResults, variant: string): RoundSample[] =>
  results.runs.filter((r) => r.variant === variant).map(roundSample);

/**
 * Round trips per request by variant, from the harness's trace output (lines such as
 * `### rest-native@node22: 1.00 round trips/request, 7.0 protocol messages/request, …`).
 */
export function parseTrace(text: string): ReadonlyMap<string, PeerTrips> {
  const trips = new Map<string, PeerTrips>();
  const line = /^### (\S+): ([\d.]+) round trips\/request, ([\d.]+) protocol messages\/request/gm;
  for (const m of text.matchAll(line)) {
    trips.set(m[1] as string, { roundTrips: Number(m[2]), messages: Number(m[3]) });
  }
  return trips;
}

function rpsTarget(results: PeerResults, variant: string, target: number): TargetCheck {
  const name = `${results.scenario}s, ${labelOf(variant)} ≥ ${target}× ${labelOf(PEER_REFERENCE)}'s req/s`;
  const ratio = ratiosByRound(roundsOf(results, variant), roundsOf(results, PEER_REFERENCE), (r) => r.rps);
  if (ratio === null) return { target: name, measured: 'no common rounds', met: false };
  return { target: name, measured: times(ratio), met: ratio.median >= target };
}

function p99Target(results: PeerResults, variant: string): TargetCheck {
  const name = `${results.scenario}s, ${labelOf(variant)}: p99 ≤ ${labelOf(PEER_REFERENCE)}'s`;
  const own = roundsOf(results, variant);
  const reference = roundsOf(results, PEER_REFERENCE);
  if (own.length === 0 || reference.length === 0) return { target: name, measured: 'not run', met: false };
  const mine = summarize(own).p99Ms;
  const theirs = summarize(reference).p99Ms;
  return {
    target: name,
    measured: `${mine.toFixed(1)} ms against ${theirs.toFixed(1)} ms`,
    met: mine <= theirs,
  };
}

function rssTarget(results: readonly PeerResults[], variant: string): TargetCheck {
  const name = `${labelOf(variant)}: peak RSS ≤ ${PEER_RSS_LIMIT_MB} MB under load`;
  const peaks = results.flatMap((r) => r.runs.filter((x) => x.variant === variant).map((x) => x.peakRssMB));
  if (peaks.length === 0) return { target: name, measured: 'not run', met: false };
  const peak = Math.max(...peaks);
  return { target: name, measured: `${peak.toFixed(0)} MB`, met: peak <= PEER_RSS_LIMIT_MB };
}

function tripsTarget(scenario: string, trips: ReadonlyMap<string, PeerTrips>, variant: string): TargetCheck {
  const name = `${scenario}s, ${labelOf(variant)}: one round trip per request`;
  const t = trips.get(variant);
  if (t === undefined) return { target: name, measured: 'not traced', met: false };
  return {
    target: name,
    measured: `${t.roundTrips.toFixed(2)} round trips, ${t.messages.toFixed(1)} messages`,
    met: t.roundTrips <= ONE_ROUND_TRIP,
  };
}

export interface PeerScenario {
  readonly results: PeerResults;
  readonly trips: ReadonlyMap<string, PeerTrips>;
}

/** Every peer target the harness measures, met or missed; a scenario not run misses its own. */
export function peerTargets(read: PeerScenario, write: PeerScenario | undefined): readonly TargetCheck[] {
  const rest = REST_VARIANTS;
  const scenarios = [read, ...(write === undefined ? [] : [write])];
  return [
    ...rest.map((v) => rpsTarget(read.results, v, PEER_RPS_TARGETS.read[v])),
    ...rest.map((v) => p99Target(read.results, v)),
    ...(write === undefined
      ? rest.map((v) => ({ target: `writes, ${labelOf(v)}`, measured: 'not run', met: false }))
      : rest.map((v) => rpsTarget(write.results, v, PEER_RPS_TARGETS.write[v]))),
    ...scenarios.flatMap((s) => rest.map((v) => tripsTarget(s.results.scenario, s.trips, v))),
    ...rest.map((v) =>
      rssTarget(
        scenarios.map((s) => s.results),
        v,
      ),
    ),
  ];
}

const f0 = (x: number | null): string => (x === null || !Number.isFinite(x) ? '–' : x.toFixed(0));
const pct = (xs: readonly number[]): string => {
  const { median, max } = spread(xs);
  return `${median.toFixed(1)}% (max ${max.toFixed(1)}%)`;
};

/** One row per variant: req/s median (min–max), ratio to Platformatic by round, p50/p99, CPU, RSS, noise. */
function scenarioTable(s: PeerScenario): string {
  const rows = [
    `| ${s.results.scenario} | req/s median (min–max) | × ${labelOf(PEER_REFERENCE)} by round | p50 ms | p99 ms | server µs/req | PostgreSQL µs/req | round trips (messages) | peak RSS MB | others' CPU during rounds |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  const reference = roundsOf(s.results, PEER_REFERENCE);
  for (const variant of PEER_VARIANTS) {
    const runs = s.results.runs.filter((r) => r.variant === variant);
    if (runs.length === 0) continue;
    const sum = summarize(runs.map(roundSample));
    const ratio =
      variant === PEER_REFERENCE ? null : ratiosByRound(runs.map(roundSample), reference, (r) => r.rps);
    const t = s.trips.get(variant);
    rows.push(
      `| ${labelOf(variant)} | ${f0(sum.rps.median)} (${f0(sum.rps.min)}–${f0(sum.rps.max)}) | ${ratio === null ? '1.00' : times(ratio)} | ${sum.p50Ms.toFixed(2)} | ${sum.p99Ms.toFixed(1)} | ${f0(sum.cpuUsPerRequest)} | ${f0(sum.dbCpuUsPerRequest)} | ${t === undefined ? '–' : `${t.roundTrips.toFixed(2)} (${t.messages.toFixed(1)})`} | ${f0(Math.max(...runs.map((r) => r.peakRssMB)))} | ${pct(runs.map((r) => r.othersDuringPct))} |`,
    );
  }
  return rows.join('\n');
}

/** The markdown `npm run bench:peers` prints: targets, then each scenario's table. */
export function renderPeerReport(
  read: PeerScenario,
  write: PeerScenario | undefined,
  heading: string,
): string {
  const targets = peerTargets(read, write);
  const rounds = Math.max(...read.results.runs.map((r) => r.round));
  return [
    `## ${heading}`,
    '',
    `Interleaved rounds of the peer harness (${rounds} read rounds${write === undefined ? ', no writes' : `, ${Math.max(...write.results.runs.map((r) => r.round))} write rounds`}); ratios are taken round by round against ${labelOf(PEER_REFERENCE)}.`,
    '',
    '| target against the peers | measured: median (min–max over rounds) | result |',
    '|---|---|---|',
    ...targets.map((t) => `| ${t.target} | ${t.measured} | ${t.met ? 'met' : 'short'} |`),
    '',
    scenarioTable(read),
    ...(write === undefined ? [] : ['', scenarioTable(write)]),
    '',
  ].join('\n');
}
