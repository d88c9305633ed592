// The console's one door to the server: the same HTTP API as any client, with the admin's token
// held in this module's memory only (never localStorage or a cookie: a reload logs out).

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

export type Caller =
  | { readonly kind: 'anonymous' }
  | { readonly kind: 'admin' }
  | { readonly kind: 'user'; readonly ref: string }
  | { readonly kind: 'claims'; readonly claims: Readonly<Record<string, unknown>> };

export const ACTIONS = ['read', 'create', 'update', 'delete', 'read_mine'] as const;
export type Action = (typeof ACTIONS)[number];

export interface MatrixCell {
  readonly decision: 'allow' | 'deny' | 'filter';
  readonly status?: 401 | 403;
  readonly policies: readonly number[];
  readonly level: string;
}

export interface MatrixTable {
  readonly table: string;
  readonly key: readonly string[];
  readonly columns: readonly string[];
  readonly cells: Readonly<Record<Action, MatrixCell>>;
}

export interface Escalation {
  readonly table: string;
  readonly action: string;
  readonly policy_id: number;
  readonly relation_policy_id: number;
  readonly relation_table: string;
  readonly message: string;
}

export interface Matrix {
  readonly database: string;
  readonly native_rls: boolean;
  readonly tables: readonly MatrixTable[];
  readonly broken: readonly { readonly id: number; readonly error: string }[];
  readonly escalations: readonly Escalation[];
}

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
