// What the bench sends: tokens minted with the shared secret (docs/authentication.md accepts external HS256
// tokens carrying `user_id`) and the request lists of the read, write and login workloads.

import { request as httpRequest, type Agent } from 'node:http';
import { SignJWT } from 'jose';
import type { LoadRequest } from './driver-protocol.js';
import { PAGE_ROWS } from './generate-data.js';

/** The read every contender answers: the caller's first PAGE_ROWS rows by id (the policy adds the owner filter). */
export const READ_PATH = `/items?order=id.asc&page_size=${PAGE_ROWS}`;
/**
 * A seed dialect read as the PostgREST dialect spells it (docs/postgrest.md): `/rest/v1/<table>`,
 * `page`/`page_size` turned into `offset`/`limit` (page 1 when not given), every other parameter as
 * it is. Paging is what the two dialects spell differently; filters and `order` read the same.
 */
export function pgrstPath(seedPath: string): string {
  const [table = '', query = ''] = seedPath.split('?', 2);
  const params = new URLSearchParams(query);
  const pageSize = params.get('page_size');
  const page = Number(params.get('page') ?? '1');
  params.delete('page');
  params.delete('page_size');
  if (pageSize !== null) {
    const limit = Number(pageSize);
    if (!Number.isInteger(limit) || limit < 1 || !Number.isInteger(page) || page < 1)
      throw new Error(`${seedPath}: page and page_size must be positive whole numbers`);
    params.set('offset', String((page - 1) * limit));
    params.set('limit', String(limit));
  }
  const rest = params.toString();
  return `/rest/v1${table}${rest === '' ? '' : `?${rest}`}`;
}
/** The owner read through the PostgREST dialect: `/rest/v1/items?order=id.asc&offset=0&limit=20`. */
export const PGRST_READ_PATH = pgrstPath(READ_PATH);
/** The PostgREST dialect's exact count (a window in the same SELECT): `Content-Range: 0-19/<total>`, 206. */
export const PGRST_COUNT_HEADERS: Readonly<Record<string, string>> = { prefer: 'count=exact' };
/** A PostgREST write that answers the row it created, as the seed dialect's POST does. */
export const PGRST_RETURN_HEADERS: Readonly<Record<string, string>> = { prefer: 'return=representation' };
/** The team membership read: the same request shape on `team_items`, filtered through `members`. */
export const TEAM_READ_PATH = `/team_items?order=id.asc&page_size=${PAGE_ROWS}`;
/** The team pattern of the README, written through `POST /auth_policies` by an admin. */
export const TEAM_POLICIES = [
  {
    table_name: 'members',
    action: 'read',
    expression: 'user_id = auth_user.id',
    description: 'bench: users see their own memberships',
  },
  {
    table_name: 'team_items',
    action: 'read',
    expression: 'team_id in (select team_id from members where user_id = auth_user.id)',
    description: "bench: members read their teams' items",
  },
] as const;
/** docs/http-api.md: the health check never needs a token — the "public read" of the login workload. */
export const PUBLIC_READ: readonly LoadRequest[] = [{ method: 'GET', path: '/', headers: {} }];

export interface UserToken {
  readonly userId: number;
  readonly token: string;
}

export interface Credentials {
  readonly username: string;
  readonly password: string;
}

export async function mintToken(
  secret: string,
  userId: number,
  ttlSeconds = 6 * 3600,
  claims: Readonly<Record<string, unknown>> = {},
): Promise<string> {
  return new SignJWT({ ...claims, user_id: userId })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds)
    .sign(new TextEncoder().encode(secret));
}

export async function mintTokens(secret: string, userIds: readonly number[]): Promise<readonly UserToken[]> {
  return Promise.all(userIds.map(async (userId) => ({ userId, token: await mintToken(secret, userId) })));
}

export const bearer = (token: string): Readonly<Record<string, string>> => ({
  authorization: `Bearer ${token}`,
});

const jsonHeaders = (token: string): Readonly<Record<string, string>> => ({
  ...bearer(token),
  'content-type': 'application/json',
});

/** Deterministic shuffle, so the 32 connections (which all start at index 0) drift apart over users. */
export function shuffled<T>(items: readonly T[], random: () => number): readonly T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    const tmp = copy[i] as T;
    copy[i] = copy[j] as T;
    copy[j] = tmp;
  }
  return copy;
}

export function readRequests(
  tokens: readonly UserToken[],
  random: () => number,
  path: string = READ_PATH,
  headers: Readonly<Record<string, string>> = {},
): readonly LoadRequest[] {
  return shuffled(tokens, random).map((t) => ({
    method: 'GET',
    path,
    headers: { ...bearer(t.token), ...headers },
  }));
}

/** POST `body` (one row or an array of rows) to `/items` as `t`. */
const postItems = (t: UserToken, body: unknown): LoadRequest => ({
  method: 'POST',
  path: '/items',
  headers: jsonHeaders(t.token),
  body: JSON.stringify(body),
});

/**
 * The single-row write of both dialects, every user in turn: `POST /items` (the seed dialect
 * answers the created row) or `POST /rest/v1/items` with `Prefer: return=representation` (the
 * created row too, in an array): the same body, the same tokens in the same order.
 */
export function createRequests(
  tokens: readonly UserToken[],
  random: () => number,
  dialect: 'seed' | 'pgrst',
): readonly LoadRequest[] {
  return shuffled(tokens, random).map((t, i) => {
    const request = postItems(t, { title: `created by the bench for ${t.userId}`, amount: i, done: false });
    return dialect === 'seed'
      ? request
      : {
          ...request,
          path: pgrstPath(request.path),
          headers: { ...request.headers, ...PGRST_RETURN_HEADERS },
        };
  });
}

/** PUT of the `i`-th (round robin) of the caller's own seeded rows by key; undefined when it has none. */
function putOwnRow(
  t: UserToken,
  i: number,
  firstIds: ReadonlyMap<number, readonly number[]>,
): LoadRequest | undefined {
  const ids = firstIds.get(t.userId) ?? [];
  const id = ids[i % Math.max(1, ids.length)];
  if (id === undefined) return undefined;
  return {
    method: 'PUT',
    path: `/items/${id}`,
    headers: jsonHeaders(t.token),
    body: JSON.stringify({ title: `updated by the bench ${i}`, amount: i }),
  };
}

/** POST a new row, then PUT one of the caller's own rows by key: 1:1, every user in turn. */
export function writeRequests(
  tokens: readonly UserToken[],
  firstIds: ReadonlyMap<number, readonly number[]>,
  random: () => number,
): readonly LoadRequest[] {
  return shuffled(tokens, random).flatMap((t, i): LoadRequest[] => {
    const put = putOwnRow(t, i, firstIds);
    if (put === undefined) return [];
    return [postItems(t, { title: `written by the bench for ${t.userId}`, amount: i, done: false }), put];
  });
}

/** The write actions whose round trips the bench counts one by one (outside the timed runs). */
export const COUNTED_ACTIONS = ['create', 'create 3 rows', 'update', 'delete'] as const;
export type CountedAction = (typeof COUNTED_ACTIONS)[number];

/**
 * One request list per counted action, every user in turn: a single-row POST, a three-row POST,
 * a PUT of one of the caller's own rows by key, and a DELETE of the rows the caller created
 * through these lists (by their title; the seeded rows stay).
 */
export function actionRequests(
  tokens: readonly UserToken[],
  firstIds: ReadonlyMap<number, readonly number[]>,
  random: () => number,
): ReadonlyMap<CountedAction, readonly LoadRequest[]> {
  const users = shuffled(tokens, random);
  const title = (userId: number): string => `counted by the bench for ${userId}`;
  const row = (userId: number, i: number) => ({ title: title(userId), amount: i, done: false });
  const each = (fn: (t: UserToken, i: number) => LoadRequest | undefined): readonly LoadRequest[] =>
    users.flatMap((t, i) => fn(t, i) ?? []);
  return new Map<CountedAction, readonly LoadRequest[]>([
    ['create', each((t, i) => postItems(t, row(t.userId, i)))],
    [
      'create 3 rows',
      each((t, i) =>
        postItems(t, [row(t.userId, i), { title: title(t.userId), amount: 0 }, row(t.userId, i + 1)]),
      ),
    ],
    ['update', each((t, i) => putOwnRow(t, i, firstIds))],
    [
      'delete',
      each((t) => ({
        method: 'DELETE',
        path: `/items?title=eq.${encodeURIComponent(title(t.userId))}`,
        headers: bearer(t.token),
      })),
    ],
  ]);
}

export function loginRequests(users: readonly Credentials[]): readonly LoadRequest[] {
  return users.map((c) => ({
    method: 'POST',
    path: '/auth/login',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(c),
  }));
}

const SEND_TIMEOUT_MS = 15_000;

export interface Answer {
  readonly status: number;
  readonly body: unknown;
  /** The answer's headers, names in lower case (node:http's). */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

/**
 * One request outside the timed runs (probes, setup, round-trip counting); the body is parsed as
 * JSON when it is JSON. Without `agent` the connection is closed after the answer: a rest server
 * that is asked to stop waits a second for a request on an idle connection before it exits (the
 * load itself is autocannon's, on its own connections). With one, its connections are kept for
 * the next request, and whoever made it destroys it before stopping the server.
 */
export function send(
  baseUrl: string,
  request: LoadRequest,
  agent?: Agent,
  timeoutMs = SEND_TIMEOUT_MS,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${baseUrl}${request.path}`,
      { method: request.method, headers: request.headers, agent: agent ?? false, timeout: timeoutMs },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.once('error', reject).once('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // Not JSON: kept as text for the failure message.
          }
          resolve({ status: res.statusCode ?? 0, body, headers: res.headers });
        });
      },
    );
    req.once('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.once('error', reject);
    // Framed by its length whatever the method (node:http frames a DELETE's body only when told).
    if (request.body !== undefined) req.setHeader('content-length', Buffer.byteLength(request.body));
    req.end(request.body);
  });
}
