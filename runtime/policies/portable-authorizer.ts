// The portable enforcement path (SPEC §4.6), for SQLite, MySQL/MariaDB and PostgreSQL with
// `-db.rls off`: the cached compiled policy decides auth_user parts in-process, its predicate is
// AND-ed into read/read_mine/update/delete, and create/update rows are checked in-process inside
// the write's transaction (owner columns filled on create).

import type { ColumnTypes } from '../../compiler/analyze.js';
import type { CompiledPolicy, Decision, PolicySet } from '../../compiler/policy-set.js';
import type { AuthUser, ColumnType } from '../../compiler/types.js';
import { RestError } from '../../errors/rest-error.js';
import type { Row, TableInfo } from '../db/adapter.js';
import type {
  Authorization,
  AuthorizationRequest,
  Authorizer,
  WriteGuard,
  WriteRow,
} from '../plan/authorizer.js';
import type { PolicyCache } from '../policy-cache.js';
import { isSecretColumn } from './secret-columns.js';

export interface PortableAuthorizerDeps {
  readonly policies: Pick<PolicyCache<PolicySet>, 'get'>;
}

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

/** 403 naming the first column a policy reads that the table lacks (SPEC §4.4). */
function missingColumnDenial(table: string, column: string): Authorization {
  return {
    kind: 'deny',
    reason: {
      category: 'forbidden',
      code: 'policy_column_missing',
      message: `the policy for ${table} uses column '${column}', which table ${table} does not have`,
      details: { table, column },
    },
  };
}

/** A row that breaks the policy: 403, or 401 for an anonymous user (PostgREST's rule for 42501, as on the native path). */
const checkFailed = (
  user: AuthUser,
  message: string,
  details: Readonly<Record<string, unknown>> | undefined,
): RestError =>
  user.is_authenticated
    ? new RestError('forbidden', 'policy_check_failed', message, details === undefined ? {} : { details })
    : new RestError('unauthenticated', 'policy_check_failed', message, {
        ...(details === undefined ? {} : { details }),
        headers: { 'WWW-Authenticate': 'Bearer' },
      });

const rowRejected = (user: AuthUser, table: string, index: number, many: boolean): RestError =>
  checkFailed(
    user,
    `the ${many ? `row at index ${index}` : 'row'} is not allowed by the policy of ${table}`,
    many ? { index } : undefined,
  );

const notYourRow = (table: string, column: string): RestError =>
  new RestError(
    'forbidden',
    'owner_mismatch',
    `${column} of a new row in ${table} must be your own user id`,
    {
      details: { column },
    },
  );

/** A user id compared the way the policy compares it: numbers and integer strings alike. */
const sameId = (value: unknown, id: number | null): boolean =>
  id !== null && value !== null && value !== undefined && String(value) === String(id);

/**
 * A new row with its owner columns (`c = auth_user.id`, SPEC §4.4) filled with the user's id when
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

/**
 * Create: a row is judged in-process before its insert, unless it leaves out a column the policy
 * reads that has a database default — then only the stored row tells what the database's own
 * WITH CHECK would judge, so it is judged right after its insert, in the same transaction.
 */
function createGuard(policy: CompiledPolicy, user: AuthUser, table: TableInfo): WriteGuard {
  const defaulted = policy.columns.filter((c) => table.columnsByName.get(c)?.hasDefault === true);
  const judgedStored = (row: WriteRow): boolean => defaulted.some((c) => !Object.hasOwn(row, c));
  const guard: WriteGuard = {
    async prepareCreate(rows) {
      return rows.map((row, index): WriteRow => {
        const filled = fillOwnerColumns(policy, user, row);
        if (!judgedStored(filled) && !policy.check(filled, user))
          throw rowRejected(user, policy.table, index, rows.length > 1);
        return filled;
      });
    },
  };
  if (defaulted.length === 0) return guard;
  return {
    ...guard,
    async checkCreatedRow({ written, stored, index, count }) {
      if (judgedStored(written) && !policy.check(stored, user))
        throw rowRejected(user, policy.table, index, count > 1);
    },
  };
}

function updateGuard(policy: CompiledPolicy, user: AuthUser): WriteGuard {
  return {
    async checkUpdatedRows(rows: readonly Row[]) {
      rows.forEach((row, index) => {
        if (!policy.check(row, user)) {
          throw checkFailed(user, `the change would make a row of ${policy.table} break its policy`, {
            index,
          });
        }
      });
    },
  };
}

/** The table's compiled policy for the action and its in-process decision for the user. */
export type InProcessDecision =
  | { readonly kind: 'denied'; readonly denial: Authorization }
  | {
      readonly kind: 'decided';
      readonly compiled: PolicySet;
      readonly policy: CompiledPolicy;
      readonly decision: Decision;
    };

/**
 * The first step of both enforcement paths: resolve the cached compiled policy and decide its
 * auth_user parts in-process; a policy naming a column the table lacks denies (403 naming it).
 */
export async function decideInProcess(
  policies: PortableAuthorizerDeps['policies'],
  { table, action, user }: AuthorizationRequest,
): Promise<InProcessDecision> {
  const { compiled } = await policies.get();
  const policy = compiled.policyFor(table.name, action, policyColumnTypes(table));
  const missing = policy.missingColumns[0];
  if (missing !== undefined) {
    // The policy cannot apply on this table; an anonymous user is told to log in first.
    const denial = user.is_authenticated
      ? missingColumnDenial(table.name, missing)
      : { kind: 'deny' as const };
    return { kind: 'denied', denial };
  }
  return { kind: 'decided', compiled, policy, decision: policy.decide(user) };
}

export function createPortableAuthorizer(deps: PortableAuthorizerDeps): Authorizer {
  return {
    async authorize(request): Promise<Authorization> {
      const decided = await decideInProcess(deps.policies, request);
      if (decided.kind === 'denied') return decided.denial;
      const { table, action, user } = request;
      const { policy, decision } = decided;
      switch (decision.kind) {
        case 'deny':
          return { kind: 'deny' };
        case 'allow':
          return { kind: 'allow' };
        case 'filter':
          switch (action) {
            case 'create':
              return {
                kind: 'filter',
                predicate: decision.predicate,
                guard: createGuard(policy, user, table),
              };
            case 'update':
              return { kind: 'filter', predicate: decision.predicate, guard: updateGuard(policy, user) };
            case 'read':
            case 'read_mine':
            case 'delete':
              return { kind: 'filter', predicate: decision.predicate };
          }
      }
    },
  };
}
