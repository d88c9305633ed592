// Correctness probes run before any timing, so that a contender that answers wrongly (or not
// at all) is reported as failed instead of looking fast: the right rows for several users,
// 401 without a token and with a forged one; for writes, the owner filled in and others' rows
// out of reach.

import type { LoadRequest } from './driver-protocol.js';
import { PAGE_ROWS } from './generate-data.js';
import type { Measured } from './report-model.js';
import { bearer, READ_PATH, send, TEAM_READ_PATH, type Answer, type UserToken } from './workloads.js';

export type ProbeOutcome = Measured<{ readonly checks: number }>;

const show = (answer: Answer): string => {
  const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
  return `${answer.status} ${text.length > 160 ? `${text.slice(0, 160)}…` : text}`;
};

const field = (row: unknown, name: string): unknown =>
  typeof row === 'object' && row !== null ? (row as Record<string, unknown>)[name] : undefined;

/** Runs checks in order; the first failure is the reason. */
async function runChecks(checks: readonly (() => Promise<string | undefined>)[]): Promise<ProbeOutcome> {
  for (const check of checks) {
    let failure: string | undefined;
    try {
      failure = await check();
    } catch (e) {
      failure = `request failed: ${e instanceof Error ? e.message : String(e)}`;
    }
    if (failure !== undefined) return { ok: false, reason: `probe: ${failure}` };
  }
  return { ok: true, value: { checks: checks.length } };
}

function expectStatus(
  baseUrl: string,
  what: string,
  request: LoadRequest,
  status: number,
): () => Promise<string | undefined> {
  return async () => {
    const answer = await send(baseUrl, request);
    return answer.status === status ? undefined : `${what}: expected ${status}, got ${show(answer)}`;
  };
}

export function probeReads(
  baseUrl: string,
  users: readonly UserToken[],
  forgedToken: string,
  firstIds: ReadonlyMap<number, readonly number[]>,
): Promise<ProbeOutcome> {
  return probeReadsAt(baseUrl, READ_PATH, users, forgedToken, firstIds, (user, rows) => {
    const owners = new Set(rows.map((r) => Number(field(r, 'user_id'))));
    return owners.size === 1 && owners.has(user.userId)
      ? undefined
      : `user ${user.userId}: rows of users ${[...owners].join(',')}`;
  });
}

/** The team membership read: each user sees exactly the first rows of their teams. */
export function probeTeamReads(
  baseUrl: string,
  users: readonly UserToken[],
  forgedToken: string,
  firstIds: ReadonlyMap<number, readonly number[]>,
): Promise<ProbeOutcome> {
  return probeReadsAt(baseUrl, TEAM_READ_PATH, users, forgedToken, firstIds, () => undefined);
}

function probeReadsAt(
  baseUrl: string,
  path: string,
  users: readonly UserToken[],
  forgedToken: string,
  firstIds: ReadonlyMap<number, readonly number[]>,
  checkRows: (user: UserToken, rows: readonly unknown[]) => string | undefined,
): Promise<ProbeOutcome> {
  const rowsOf = (user: UserToken) => async (): Promise<string | undefined> => {
    const answer = await send(baseUrl, { method: 'GET', path, headers: bearer(user.token) });
    const expected = firstIds.get(user.userId) ?? [];
    if (answer.status !== 200 || !Array.isArray(answer.body))
      return `user ${user.userId}: expected 200 and ${PAGE_ROWS} rows, got ${show(answer)}`;
    const rows: readonly unknown[] = answer.body;
    const ids = rows.map((r) => Number(field(r, 'id')));
    if (ids.join(',') !== expected.join(',')) {
      return `user ${user.userId}: expected ids ${expected.join(',')}, got ${ids.join(',') || 'none'}`;
    }
    return checkRows(user, rows);
  };
  return runChecks([
    expectStatus(baseUrl, 'no token', { method: 'GET', path, headers: {} }, 401),
    expectStatus(
      baseUrl,
      'token signed with another secret',
      { method: 'GET', path, headers: bearer(forgedToken) },
      401,
    ),
    ...users.map(rowsOf),
  ]);
}

export function probeWrites(
  baseUrl: string,
  writer: UserToken,
  other: UserToken,
  firstIds: ReadonlyMap<number, readonly number[]>,
): Promise<ProbeOutcome> {
  const headers = { ...bearer(writer.token), 'content-type': 'application/json' };
  const own = firstIds.get(writer.userId)?.[0];
  const foreign = firstIds.get(other.userId)?.[0];
  return runChecks([
    async () => {
      const answer = await send(baseUrl, {
        method: 'POST',
        path: '/items',
        headers,
        body: JSON.stringify({ title: 'bench probe', amount: 1, done: false }),
      });
      if (answer.status !== 201) return `POST /items: expected 201, got ${show(answer)}`;
      const owner = Number(field(answer.body, 'user_id'));
      return owner === writer.userId
        ? undefined
        : `POST /items: expected user_id ${writer.userId} filled in, got ${show(answer)}`;
    },
    async () => {
      const answer = await send(baseUrl, {
        method: 'PUT',
        path: `/items/${String(own)}`,
        headers,
        body: JSON.stringify({ title: 'bench probe' }),
      });
      if (answer.status !== 200 || Number(field(answer.body, 'updated')) !== 1) {
        return `PUT own row ${String(own)}: expected 200 {"updated":1}, got ${show(answer)}`;
      }
      return undefined;
    },
    expectStatus(
      baseUrl,
      `PUT row ${String(foreign)} of user ${other.userId} as user ${writer.userId}`,
      {
        method: 'PUT',
        path: `/items/${String(foreign)}`,
        headers,
        body: JSON.stringify({ title: 'stolen' }),
      },
      404,
    ),
  ]);
}

export function probeLogin(
  baseUrl: string,
  user: { readonly username: string; readonly password: string },
): Promise<ProbeOutcome> {
  return runChecks([
    async () => {
      const answer = await send(baseUrl, {
        method: 'POST',
        path: '/auth/login',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(user),
      });
      if (answer.status !== 200 || typeof field(answer.body, 'token') !== 'string') {
        return `POST /auth/login: expected 200 with a token, got ${answer.status}`;
      }
      return undefined;
    },
    expectStatus(baseUrl, 'public GET /', { method: 'GET', path: '/', headers: {} }, 200),
  ]);
}
