// Correctness probes run before any timing, so that a contender that answers wrongly (or not
// at all) is reported as failed instead of looking fast: the right rows for several users,
// 401 without a token and with a forged one; for writes, the owner filled in and others' rows
// out of reach.

import type { LoadRequest } from './driver-protocol.js';
import { PAGE_ROWS } from './generate-data.js';
import type { Measured } from './report-model.js';
import { jwtClaims } from './sessions.js';
import {
  bearer,
  PGRST_COUNT_HEADERS,
  PGRST_READ_PATH,
  PGRST_RETURN_HEADERS,
  pgrstPath,
  READ_PATH,
  send,
  TEAM_READ_PATH,
  type Answer,
  type UserToken,
} from './workloads.js';

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

/**
 * The owner read through `/rest/v1` (docs/postgrest.md): each user's same first rows as the seed
 * read, only theirs, `Content-Range: 0-19/*`; with `Prefer: count=exact` the same rows, 206 and
 * the user's row count as the total; a forged token 401.
 */
export function probePgrstReads(
  baseUrl: string,
  users: readonly UserToken[],
  forgedToken: string,
  firstIds: ReadonlyMap<number, readonly number[]>,
  ownedRows: (userId: number) => number,
): Promise<ProbeOutcome> {
  const read = (user: UserToken, counted: boolean) => async (): Promise<string | undefined> => {
    const what = `user ${user.userId}${counted ? ' with count=exact' : ''}`;
    const answer = await send(baseUrl, {
      method: 'GET',
      path: PGRST_READ_PATH,
      headers: { ...bearer(user.token), ...(counted ? PGRST_COUNT_HEADERS : {}) },
    });
    const expected = firstIds.get(user.userId) ?? [];
    const total = ownedRows(user.userId);
    // Partial content when the count shows more rows than came back.
    const status = counted && total > expected.length ? 206 : 200;
    if (answer.status !== status || !Array.isArray(answer.body))
      return `${what}: expected ${status} and ${PAGE_ROWS} rows, got ${show(answer)}`;
    const rows: readonly unknown[] = answer.body;
    const ids = rows.map((r) => Number(field(r, 'id')));
    if (ids.join(',') !== expected.join(','))
      return `${what}: expected ids ${expected.join(',')}, got ${ids.join(',') || 'none'}`;
    const owners = new Set(rows.map((r) => Number(field(r, 'user_id'))));
    if (owners.size !== 1 || !owners.has(user.userId))
      return `${what}: rows of users ${[...owners].join(',')}`;
    const range = `0-${expected.length - 1}/${counted ? String(total) : '*'}`;
    const got = answer.headers['content-range'];
    return got === range ? undefined : `${what}: expected Content-Range ${range}, got ${String(got)}`;
  };
  return runChecks([
    expectStatus(
      baseUrl,
      'token signed with another secret',
      { method: 'GET', path: PGRST_READ_PATH, headers: bearer(forgedToken) },
      401,
    ),
    ...users.flatMap((user) => [read(user, false), read(user, true)]),
  ]);
}

/** `POST /rest/v1/items` with `Prefer: return=representation`: 201 and the created row, owner filled in. */
export function probePgrstCreate(baseUrl: string, writer: UserToken): Promise<ProbeOutcome> {
  const title = 'bench probe through /rest/v1';
  return runChecks([
    async () => {
      const answer = await send(baseUrl, {
        method: 'POST',
        path: pgrstPath('/items'),
        headers: { ...bearer(writer.token), 'content-type': 'application/json', ...PGRST_RETURN_HEADERS },
        body: JSON.stringify({ title, amount: 1, done: false }),
      });
      const rows: readonly unknown[] = Array.isArray(answer.body) ? answer.body : [];
      const [row] = rows;
      if (answer.status !== 201 || rows.length !== 1)
        return `POST /rest/v1/items: expected 201 and the created row, got ${show(answer)}`;
      return Number(field(row, 'user_id')) === writer.userId && field(row, 'title') === title
        ? undefined
        : `POST /rest/v1/items: expected user_id ${writer.userId} filled in, got ${show(answer)}`;
    },
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

/**
 * The session read (docs/authentication.md): session tokens read their users' rows like external tokens do, a
 * token naming a session that does not exist gets 401, and a real login of a bench user (password
 * checked against the shared hash) gives a token with `sid` that reads the same rows.
 */
export function probeSessionReads(
  baseUrl: string,
  users: readonly UserToken[],
  forgedToken: string,
  unknownSessionToken: string,
  login: { readonly userId: number; readonly username: string; readonly password: string },
  firstIds: ReadonlyMap<number, readonly number[]>,
): Promise<ProbeOutcome> {
  return runChecks([
    async () => {
      const reads = await probeReads(baseUrl, users, forgedToken, firstIds);
      return reads.ok ? undefined : `session tokens: ${reads.reason.replace(/^probe: /, '')}`;
    },
    expectStatus(
      baseUrl,
      'a session token whose sid was never stored',
      { method: 'GET', path: READ_PATH, headers: bearer(unknownSessionToken) },
      401,
    ),
    async () => {
      const answer = await send(baseUrl, {
        method: 'POST',
        path: '/auth/login',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: login.username, password: login.password }),
      });
      const token = field(answer.body, 'token');
      if (answer.status !== 200 || typeof token !== 'string')
        return `login of ${login.username}: expected 200 with a token, got ${show(answer)}`;
      const claims = jwtClaims(token);
      if (typeof claims?.['sid'] !== 'string' || Number(claims['user_id']) !== login.userId)
        return `login of ${login.username}: the token has no sid or another user_id (${JSON.stringify(claims)})`;
      const reads = await probeReads(baseUrl, [{ userId: login.userId, token }], forgedToken, firstIds);
      return reads.ok ? undefined : `the login's token: ${reads.reason.replace(/^probe: /, '')}`;
    },
  ]);
}

/**
 * After a session was revoked in the database: its token gets 401 within `withinMs` (the server
 * heard of it: NOTIFY on PostgreSQL, the poll elsewhere), while another session of the same user
 * still reads.
 */
export async function probeRevoked(
  baseUrl: string,
  revoked: UserToken,
  live: UserToken,
  withinMs: number,
): Promise<Measured<{ readonly checks: number; readonly refusedAfterMs: number }>> {
  const started = performance.now();
  const request = { method: 'GET', path: READ_PATH, headers: bearer(revoked.token) } as const;
  let last: Answer | undefined;
  try {
    for (;;) {
      last = await send(baseUrl, request);
      if (last.status === 401) break;
      if (last.status !== 200)
        return { ok: false, reason: `probe: revoked session: expected 200 then 401, got ${show(last)}` };
      if (performance.now() - started > withinMs)
        return {
          ok: false,
          reason: `probe: a revoked session still read after ${withinMs} ms (${show(last)})`,
        };
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const refusedAfterMs = performance.now() - started;
    const other = await send(baseUrl, { method: 'GET', path: READ_PATH, headers: bearer(live.token) });
    if (other.status !== 200)
      return {
        ok: false,
        reason: `probe: the user's other session after the revocation: expected 200, got ${show(other)}`,
      };
    return { ok: true, value: { checks: 2, refusedAfterMs } };
  } catch (e) {
    return { ok: false, reason: `probe: request failed: ${e instanceof Error ? e.message : String(e)}` };
  }
}
