// The in-process first step of both enforcement paths (docs/policy-language.md): resolve the cached compiled
// policy of (table, action), deny one naming a column the table lacks, and decide what auth_user
// alone decides. Also the owner preset on create (`c = auth_user.id` filled when missing).

import type { ColumnTypes } from '../../compiler/types.js';
import type { CompiledPolicy, Decision, PolicySet } from '../../compiler/policy-set.js';
import type { SchemaTypes } from '../../compiler/scope.js';
import type { Action, AuthUser, ColumnType } from '../../compiler/types.js';
import { RestError } from '../../errors/rest-error.js';
import { INTERNAL_TABLES } from '../auth/auth-ddl.js';
import { isSecretColumn } from '../auth/secret-columns.js';
import type { SchemaSnapshot, TableInfo } from '../db/adapter.js';
import type { AuthorizationRequest, PolicySource, WriteRow } from './authorizer.js';
import type { DenyReason } from './denials.js';

/**
 * Column types the policies may read: secret columns (the password hash) are left out, so a
 * policy naming one counts as naming a missing column. One map per table snapshot, so the
 * policy set's memo recognises it by identity.
 */
const columnTypesCache = new WeakMap<TableInfo, ColumnTypes>();
export function policyColumnTypes(table: TableInfo): ColumnTypes {
  let types = columnTypesCache.get(table);
  if (types === undefined) {
    types = new Map<string, ColumnType>(
      table.columns.filter((c) => !isSecretColumn(table.name, c.name)).map((c) => [c.name, c.type] as const),
    );
    columnTypesCache.set(table, types);
  }
  return types;
}

/**
 * Every served table's policy column types (secret columns left out, as above), what policies with
 * subqueries are compiled against: a subquery on one of the server's own tables reads a table that
 * does not exist for it, so it denies (validation refuses it). One map per schema snapshot, for the
 * same reason.
 */
const schemaTypesCache = new WeakMap<SchemaSnapshot, SchemaTypes>();
export function schemaTypesOf(snapshot: SchemaSnapshot): SchemaTypes {
  let types = schemaTypesCache.get(snapshot);
  if (types === undefined) {
    types = new Map(
      [...snapshot.tables.values()]
        .filter((t) => !INTERNAL_TABLES.has(t.name))
        .map((t) => [t.name, policyColumnTypes(t)] as const),
    );
    schemaTypesCache.set(snapshot, types);
  }
  return types;
}

/** The compiled policy of `action` on `table` under `set`, typed by the table and the schema. */
export function tablePolicy(
  set: PolicySet,
  table: TableInfo,
  action: Action,
  schema: SchemaSnapshot,
): CompiledPolicy {
  return set.policyFor(table.name, action, policyColumnTypes(table), schemaTypesOf(schema));
}

/** The table's compiled policy for the action and its in-process decision for the user. */
export type InProcessDecision =
  | { readonly kind: 'denied'; readonly reason: DenyReason }
  | {
      readonly kind: 'decided';
      readonly compiled: PolicySet;
      readonly policy: CompiledPolicy;
      readonly decision: Decision;
    };

/** 403 naming the first column a policy reads that the table lacks; an anonymous user is told to log in. */
function missingColumn(user: AuthUser, table: string, column: string): DenyReason {
  if (!user.is_authenticated) return {};
  return {
    code: 'policy_column_missing',
    message: `the policy for ${table} uses column '${column}', which table ${table} does not have`,
    details: { table, column },
  };
}

/** Decides `policy` for a request whose compiled policy set is already at hand. */
function decideWith(
  compiled: PolicySet,
  { table, action, user, schema }: AuthorizationRequest,
): InProcessDecision {
  const policy = tablePolicy(compiled, table, action, schema);
  const missing = policy.missingColumns[0];
  if (missing !== undefined) return { kind: 'denied', reason: missingColumn(user, table.name, missing) };
  return { kind: 'decided', compiled, policy, decision: policy.decide(user) };
}

export async function decideInProcess(
  policies: PolicySource,
  request: AuthorizationRequest,
): Promise<InProcessDecision> {
  const { compiled } = await policies.get();
  return decideWith(compiled, request);
}

const notYourRow = (table: string, column: string): RestError =>
  new RestError('owner_mismatch', `${column} of a new row in ${table} must be your own user id`, {
    details: { column },
  });

/** A user id compared the way the policy compares it: numbers and integer strings alike. */
const sameId = (value: unknown, id: number | null): boolean =>
  id !== null && value !== null && value !== undefined && String(value) === String(id);

/**
 * A new row with its owner columns (`c = auth_user.id`, docs/policy-language.md) filled with the user's id when
 * missing; another id is refused (403 owner_mismatch). Both enforcement paths use it.
 */
export function fillOwnerColumns(policy: CompiledPolicy, user: AuthUser, row: WriteRow): WriteRow {
  const filled: Record<string, unknown> = { ...row };
  for (const column of policy.ownerColumns) {
    if (!Object.hasOwn(row, column)) filled[column] = user.id;
    else if (!sameId(row[column], user.id)) throw notYourRow(policy.table, column);
  }
  return filled;
}
