// Vocabulary shared by the compiler and its callers: actions, policy rows, the request's user.

export const ACTIONS = ['create', 'read', 'update', 'delete', 'read_mine'] as const;
export type Action = (typeof ACTIONS)[number];
export const POLICY_ACTIONS = [...ACTIONS, 'all'] as const;
export type PolicyAction = (typeof POLICY_ACTIONS)[number];

export const isPolicyAction = (s: string): s is PolicyAction =>
  (POLICY_ACTIONS as readonly string[]).includes(s);

/** A row of `auth_policies` (docs/authentication.md). */
export interface PolicyRow {
  readonly id: number;
  readonly table_name: string;
  readonly action: string;
  readonly expression: string;
  readonly description: string;
  /** The column rule as stored (grammar/column-rule.ts); NULL: every column. */
  readonly columns: string | null;
}

/** `auth_user` of docs/authentication.md: derived from the verified token alone. */
export interface AuthUser {
  readonly id: number | null;
  readonly username: string | null;
  readonly is_admin: boolean;
  readonly is_authenticated: boolean;
  readonly claims: Readonly<Record<string, unknown>>;
}

export const ANONYMOUS: AuthUser = Object.freeze({
  id: null,
  username: null,
  is_admin: false,
  is_authenticated: false,
  claims: Object.freeze({}),
});

export type DialectName = 'postgres' | 'mysql' | 'sqlite';

/** The value kinds a column is compared as; the runtime derives them from the schema. */
export type ColumnType = 'integer' | 'decimal' | 'text' | 'boolean' | 'other';

/** The columns of one table and their types, by name. */
export type ColumnTypes = ReadonlyMap<string, ColumnType>;
