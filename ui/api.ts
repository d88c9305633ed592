// The console's one door to the server: the same HTTP API as any client, with the admin's token
// held in this module's memory only (never localStorage or a cookie: a reload logs out). The
// console API's shapes are the server's own (runtime/console/console-types.ts, types only).

import type { Action } from '../runtime/console/console-types.js';

export interface ApiError {
  readonly code: string;
  readonly message: string;
  readonly details?: Readonly<Record<string, unknown>>;
}

export interface Reply<T = unknown> {
  readonly status: number;
  readonly body: T;
}

let token: string | undefined;

export const setToken = (value: string | undefined): void => {
  token = value;
};

export async function call<T = unknown>(method: string, path: string, body?: unknown): Promise<Reply<T>> {
  const headers: Record<string, string> = {};
  if (token !== undefined) headers['Authorization'] = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(path, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: (text === '' ? null : JSON.parse(text)) as T };
}

/** The `error` of an error body, or a sentence for an answer without one. */
export function errorOf(reply: Reply): ApiError {
  const body = reply.body as { error?: ApiError } | null;
  return body?.error ?? { code: 'http_error', message: `the server answered ${reply.status}` };
}

export type {
  Action,
  Caller,
  ColumnCondition,
  ColumnsExplanation,
  ExplainBody,
  Matrix,
  MatrixCell,
  MatrixTable,
  PolicyEscalation as Escalation,
  ReadColumns,
  TestBody,
  TryAnswer,
  TryBody,
  WriteColumns,
} from '../runtime/console/console-types.js';

/** The actions in the order the page shows them. */
export const ACTIONS = [
  'read',
  'create',
  'update',
  'delete',
  'read_mine',
] as const satisfies readonly Action[];

export interface PolicyRow {
  readonly id: number;
  readonly table_name: string;
  readonly action: string;
  readonly expression: string;
  readonly description: string;
  readonly columns?: string | null;
}

const PAGE = 1000;

/** Every row of auth_policies, by id, page after page. */
export async function listPolicies(): Promise<Reply<readonly PolicyRow[]>> {
  const rows: PolicyRow[] = [];
  for (let page = 1; ; page++) {
    const reply = await call<PolicyRow[]>(
      'GET',
      `/auth_policies?order=id.asc&page_size=${PAGE}&page=${page}`,
    );
    if (reply.status !== 200) return reply;
    rows.push(...reply.body);
    if (reply.body.length < PAGE) return { status: 200, body: rows };
  }
}
