// The bench's per-action round-trip counting: the request lists, the target and the table.

import { describe, expect, it } from 'vitest';
import { actionTripsSection } from '../report-markdown.js';
import type { ActionTrips, RoundTrips } from '../report-model.js';
import { actionTripTargets } from '../targets.js';
import { actionRequests, COUNTED_ACTIONS } from '../workloads.js';

const trips = (flightsPerRequest: number): RoundTrips => ({
  requests: 100,
  flightsPerRequest,
  messagesPerRequest: 7,
  syncsPerRequest: 1,
  queriesPerRequest: 0,
  newConnections: 0,
});

const row = (flights: readonly number[]): ActionTrips => ({
  contender: 'rest-pg-rls',
  label: 'rest native',
  actions: COUNTED_ACTIONS.map((action, i) => ({
    action,
    trips: { ok: true, value: trips(flights[i] ?? 0) },
  })),
});

describe('actionRequests', () => {
  const tokens = [
    { userId: 1, token: 't1' },
    { userId: 2, token: 't2' },
  ];
  const lists = actionRequests(tokens, new Map([[1, [10, 11]]]), () => 0.5);

  it('has one list per counted action, in order, every user in turn (an update needs a row of the caller)', () => {
    expect([...lists.keys()]).toEqual([...COUNTED_ACTIONS]);
    expect(lists.get('create')?.length).toBe(2);
    expect(lists.get('update')?.map((r) => [r.method, r.path])).toEqual([['PUT', '/items/10']]);
  });

  it('creates three rows in one POST, one of them leaving columns to their defaults', () => {
    const [first] = lists.get('create 3 rows') ?? [];
    const body = JSON.parse(first?.body ?? 'null') as Array<Record<string, unknown>>;
    expect(body).toHaveLength(3);
    expect(Object.keys(body[1] ?? {})).toEqual(['title', 'amount']);
  });

  it("deletes by the title the caller's counted creates carry", () => {
    for (const request of lists.get('delete') ?? []) {
      const auth = request.headers['authorization'];
      const create = lists.get('create')?.find((c) => c.headers['authorization'] === auth);
      const title = (JSON.parse(create?.body ?? '{}') as { title: string }).title;
      expect(request.method).toBe('DELETE');
      expect(request.path).toBe(`/items?title=eq.${encodeURIComponent(title)}`);
    }
  });
});

describe('actionTripTargets and actionTripsSection', () => {
  it('meets the target only when every action is one round trip', () => {
    expect(actionTripTargets([row([1, 1, 1, 1])]).map((t) => t.met)).toEqual([true]);
    const missed = actionTripTargets([row([1, 4, 1, 1])]);
    expect(missed.map((t) => t.met)).toEqual([false]);
    expect(missed[0]?.measured).toContain('create 3 rows 4.00');
    expect(
      actionTripTargets([
        { ...row([]), actions: [{ action: 'delete', trips: { ok: false, reason: 'boom' } }] },
      ])[0],
    ).toMatchObject({ met: false, measured: 'delete not measured: boom' });
  });

  it('renders one row per contender with a column per action', () => {
    const table = actionTripsSection([row([1, 1, 1, 1])]);
    expect(table).toContain('| contender | create | create 3 rows | update | delete |');
    expect(table).toContain(
      '| rest native | 1.00 (7.0 msgs) | 1.00 (7.0 msgs) | 1.00 (7.0 msgs) | 1.00 (7.0 msgs) |',
    );
    expect(actionTripsSection(undefined)).toBe('');
  });
});
