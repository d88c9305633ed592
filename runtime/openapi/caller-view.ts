// What one caller may use of the API, from the schema snapshot and the compiled policies the
// requests use: per served table, the actions not denied whatever the row (the in-process decision
// of runtime/enforce/decide.ts for this `auth_user`) and the columns it may read and write. The
// OpenAPI document is a function of this view, so two callers with the same view share one.

import type { PolicySet } from '../../compiler/policy-set.js';
import { ACTIONS, type Action, type AuthUser } from '../../compiler/types.js';
import { AUTH_USERS_TABLE, INTERNAL_TABLES } from '../auth/auth-ddl.js';
import { isSecretColumn } from '../auth/secret-columns.js';
import type { ColumnInfo, SchemaSnapshot, TableInfo } from '../db/adapter.js';
import { ADMIN_ONLY_USER_COLUMNS } from '../enforce/auth-users-floor.js';
import { decideInProcess, tablePolicy } from '../enforce/decide.js';
import { portableCondition, readColumnsOf, writeColumnsOf } from '../enforce/request-columns.js';

export interface TableView {
  readonly table: TableInfo;
  /** The actions this caller is not denied whatever the row; never empty (such a table is left out). */
  readonly actions: ReadonlySet<Action>;
  /** The columns a read returns to this caller. */
  readonly readable: readonly ColumnInfo[];
  /** The columns this caller may put in a body. */
  readonly writable: readonly ColumnInfo[];
}

export interface CallerView {
  /** With auth off every table is public and the auth endpoints are not served. */
  readonly authEnabled: boolean;
  /** The tables the caller may use, by name. */
  readonly tables: readonly TableView[];
}

export interface CallerViewInput {
  readonly snapshot: SchemaSnapshot;
  readonly user: AuthUser;
  /** The compiled policies the requests use; undefined while auth is disabled (everything allowed). */
  readonly policies: PolicySet | undefined;
}

/** The body keys `action`'s column rules keep from this caller (enforce/request-columns.ts). */
function ruledOut(
  table: TableInfo,
  user: AuthUser,
  policies: PolicySet,
  snapshot: SchemaSnapshot,
  action: 'create' | 'update',
): ReadonlySet<string> {
  return (
    writeColumnsOf(tablePolicy(policies, table, action, snapshot), table, user, portableCondition)?.never ??
    NONE
  );
}

const NONE: ReadonlySet<string> = new Set();

/** A masked column reads as null in the rows its condition does not show: nullable to this caller. */
const maskedNullable = (column: ColumnInfo): ColumnInfo =>
  column.nullable ? column : { ...column, nullable: true };

/**
 * The columns of `table` a caller may read and write: every column but the secret ones
 * (`auth_users.password`, its hidden key), those the column rules hide from the caller's reads
 * (docs/policy-language.md), the masked ones nullable, and, in a body, those neither `create` nor
 * `update` lets the caller write; with auth on, for a non-admin not the admin-only columns of
 * `auth_users` in a body (the floor of docs/authentication.md).
 */
export function callerColumns(
  table: TableInfo,
  user: AuthUser,
  policies: PolicySet | undefined,
  snapshot: SchemaSnapshot,
): { readonly readable: readonly ColumnInfo[]; readonly writable: readonly ColumnInfo[] } {
  const columns = table.columns.filter((c) => !isSecretColumn(table.name, c.name));
  if (policies === undefined) return { readable: columns, writable: columns };
  const read = readColumnsOf(tablePolicy(policies, table, 'read', snapshot), table, user, portableCondition);
  const readable =
    read === undefined
      ? columns
      : columns
          .filter((c) => !read.hidden.has(c.name))
          .map((c) => (read.masks.has(c.name) ? maskedNullable(c) : c));
  const notCreated = ruledOut(table, user, policies, snapshot, 'create');
  const notUpdated = ruledOut(table, user, policies, snapshot, 'update');
  const adminOnly = table.name === AUTH_USERS_TABLE && !user.is_admin;
  const writable = columns.filter(
    (c) =>
      !(notCreated.has(c.name) && notUpdated.has(c.name)) &&
      !(adminOnly && ADMIN_ONLY_USER_COLUMNS.includes(c.name)),
  );
  return { readable, writable };
}

async function allowedActions(
  input: CallerViewInput,
  table: TableInfo,
  policies: PolicySet,
): Promise<Set<Action>> {
  const source = { get: async () => ({ compiled: policies }) };
  const allowed = new Set<Action>();
  for (const action of ACTIONS) {
    const decided = await decideInProcess(source, {
      table,
      action,
      user: input.user,
      schema: input.snapshot,
    });
    if (decided.kind === 'decided' && decided.decision.kind !== 'deny') allowed.add(action);
  }
  return allowed;
}

export async function callerView(input: CallerViewInput): Promise<CallerView> {
  const { snapshot, user, policies } = input;
  const tables: TableView[] = [];
  const names = [...snapshot.tables.keys()].filter((n) => !INTERNAL_TABLES.has(n)).sort();
  for (const name of names) {
    const table = snapshot.tables.get(name);
    if (table === undefined) continue;
    const actions = policies === undefined ? new Set(ACTIONS) : await allowedActions(input, table, policies);
    if (actions.size === 0) continue;
    tables.push({ table, actions, ...callerColumns(table, user, policies, snapshot) });
  }
  return { authEnabled: policies !== undefined, tables };
}

/** A string equal for two views exactly when the document of one serves the other (same snapshot). */
export function viewKey(view: CallerView): string {
  return JSON.stringify([
    view.authEnabled,
    view.tables.map((t) => [
      t.table.name,
      [...t.actions].sort(),
      t.readable.map((c) => [c.name, c.nullable]),
      t.writable.map((c) => c.name),
    ]),
  ]);
}
