// The team membership workload of the bench: its data, the rows each user must see,
// the options that turn it on and off, and the target that compares it with the owner-filter read.

import { describe, expect, it } from 'vitest';
import {
  FULL_TEAM,
  generateTeamData,
  PAGE_ROWS,
  SMOKE_TEAM,
  teamFirstIdsByUser,
  type TeamShape,
} from '../generate-data.js';
import { parseBenchOptions } from '../options.js';
import type { RoundSample, ScenarioRow, TeamReport, TeamRow } from '../report-model.js';
import { evaluateTargets, TEAM_READ_MIN_RATIO, teamReadTargets } from '../targets.js';

const SHAPE: TeamShape = { rows: 2_000, teams: 20, users: 100 };

describe('generateTeamData', () => {
  const data = generateTeamData(SHAPE);

  it('spreads the rows evenly over the teams, ids 1..rows', () => {
    expect(data.items.map((r) => r.id)).toEqual(Array.from({ length: SHAPE.rows }, (_, i) => i + 1));
    const perTeam = new Map<number, number>();
    for (const r of data.items) perTeam.set(r.team_id, (perTeam.get(r.team_id) ?? 0) + 1);
    expect(perTeam.size).toBe(SHAPE.teams);
    expect(new Set(perTeam.values())).toEqual(new Set([SHAPE.rows / SHAPE.teams]));
  });

  it('puts every user in one or two distinct teams and every team has members', () => {
    const teamsOf = new Map<number, number[]>();
    for (const m of data.members) teamsOf.set(m.user_id, [...(teamsOf.get(m.user_id) ?? []), m.team_id]);
    expect([...teamsOf.keys()].sort((a, b) => a - b)).toEqual(
      Array.from({ length: SHAPE.users }, (_, i) => i + 1),
    );
    for (const teams of teamsOf.values()) {
      expect(teams.length === 1 || teams.length === 2).toBe(true);
      expect(new Set(teams).size).toBe(teams.length);
      for (const t of teams) expect(t >= 1 && t <= SHAPE.teams).toBe(true);
    }
    const twoTeams = [...teamsOf.values()].filter((t) => t.length === 2).length;
    expect(twoTeams).toBeGreaterThan(SHAPE.users * 0.3);
    expect(twoTeams).toBeLessThan(SHAPE.users * 0.7);
    expect(new Set(data.members.map((m) => m.team_id)).size).toBe(SHAPE.teams);
  });

  it('is deterministic', () => {
    expect(generateTeamData(SHAPE)).toEqual(data);
  });

  it('gives each user the first PAGE_ROWS ids of the rows of their teams', () => {
    const firstIds = teamFirstIdsByUser(data);
    for (let user = 1; user <= SHAPE.users; user++) {
      const teams = new Set(data.members.filter((m) => m.user_id === user).map((m) => m.team_id));
      const expected = data.items
        .filter((r) => teams.has(r.team_id))
        .map((r) => r.id)
        .slice(0, PAGE_ROWS);
      expect(firstIds.get(user)).toEqual(expected);
    }
  });

  it('refuses a shape without PAGE_ROWS rows per team', () => {
    expect(() => generateTeamData({ rows: 10, teams: 5, users: 5 })).toThrow(/rows per team/);
  });

  it("has the full profile's sizes", () => {
    expect(FULL_TEAM).toEqual({ rows: 200_000, teams: 1_000, users: 5_000 });
  });
});

describe('--team', () => {
  it('is on in the full profile and off in the smoke profile by default', () => {
    expect(parseBenchOptions([], {}).team).toEqual(FULL_TEAM);
    expect(parseBenchOptions(['--smoke'], {}).team).toBeUndefined();
  });

  it('can be turned on for a smoke run and off for a full one', () => {
    expect(parseBenchOptions(['--smoke', '--team', 'on'], {}).team).toEqual(SMOKE_TEAM);
    expect(parseBenchOptions(['--team', 'off'], {}).team).toBeUndefined();
  });

  it('accepts only on or off', () => {
    expect(() => parseBenchOptions(['--team', 'yes'], {})).toThrow(/--team must be on or off/);
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

function row(contender: ScenarioRow['contender'], rps: readonly number[]): ScenarioRow {
  const rounds = rps.map((v, i) => round(i + 1, v));
  return {
    contender,
    label: contender,
    outcome: {
      ok: true,
      value: {
        rps: { median: 0, min: 0, max: 0 },
        p50Ms: 1,
        p99Ms: 2,
        cpuUsPerRequest: null,
        dbCpuUsPerRequest: null,
      },
    },
    rounds,
    vsBaseline: null,
    roundTrips: null,
  };
}

const teamReport = (read: readonly TeamRow[]): TeamReport => ({
  rows: 1,
  teams: 1,
  users: 1,
  memberships: 1,
  policies: [],
  read,
});

describe('the team read target', () => {
  const owner = [row('rest-pg-portable', [1000, 1000, 1000]), row('rest-pg-rls', [800, 800, 800])];

  it('compares each PostgreSQL path with its own owner-filter read, round by round', () => {
    const team = teamReport([
      { ...row('rest-pg-portable', [900, 600, 800]), vsOwnerRead: null },
      { ...row('rest-pg-rls', [400, 520, 480]), vsOwnerRead: null },
    ]);
    const [portable, native] = teamReadTargets(owner, team, 'off');
    expect(portable?.measured).toBe('0.80× (0.60–0.90)');
    expect(portable?.met).toBe(true);
    expect(native?.measured).toBe('0.60× (0.50–0.65)');
    expect(native?.met).toBe(false);
    expect(native?.target).toContain(`≥ ${TEAM_READ_MIN_RATIO}×`);
  });

  it('is missed, with the reason, when the team read failed or did not run', () => {
    const failed: TeamRow = {
      ...row('rest-pg-rls', []),
      outcome: { ok: false, reason: 'probe: user 1: expected ids 1,2' },
      vsOwnerRead: null,
    };
    const [, native] = teamReadTargets(owner, teamReport([failed]), 'off');
    expect(native).toMatchObject({
      met: false,
      measured: 'team read failed: probe: user 1: expected ids 1,2',
    });
    for (const t of teamReadTargets(owner, null, 'the team workload is off (--team off)'))
      expect(t).toMatchObject({ met: false, measured: 'not run: the team workload is off (--team off)' });
  });

  it('is listed among the targets of a run', () => {
    const login = {
      contender: 'rest-pg-portable',
      users: 1,
      loginConnections: 1,
      readConnections: 1,
      outcome: { ok: false, reason: 'not run' },
    } as const;
    const targets = evaluateTargets(owner, [], login, null);
    expect(targets.filter((t) => t.target.includes('team membership read'))).toHaveLength(2);
  });
});
