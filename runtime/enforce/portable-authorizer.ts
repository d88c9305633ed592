// The portable enforcement path (docs/row-level-security.md), for SQLite, MySQL/MariaDB and PostgreSQL with
// `-db.rls off`: the cached compiled policy decides auth_user parts in-process; its predicate is
// AND-ed into read/read_mine/update/delete, and is the check the database evaluates on the rows
// a create or update stored, inside the write's transaction (owner columns filled on create).

import type { CompiledPolicy, Decision } from '../../compiler/policy-set.js';
import type { Action, AuthUser } from '../../compiler/types.js';
import type { Authorization, Authorizer, PolicySource, WriteGuard } from './authorizer.js';
import { decideInProcess, fillOwnerColumns } from './decide.js';
import { portableCondition, requestColumns } from './request-columns.js';

export interface PortableAuthorizerDeps {
  readonly policies: PolicySource;
}

/** create: owner columns filled with the user's id (another id → 403 owner_mismatch). */
export const ownerPreset = (policy: CompiledPolicy, user: AuthUser): WriteGuard | undefined =>
  policy.ownerColumns.length === 0
    ? undefined
    : { prepareCreate: async (rows) => rows.map((row) => fillOwnerColumns(policy, user, row)) };

/** What the in-process decision of `policy` (not a deny) lets the request do on this path. */
function rowAuthorization(
  policy: CompiledPolicy,
  decision: Exclude<Decision, { kind: 'deny' }>,
  action: Action,
  user: AuthUser,
): Exclude<Authorization, { kind: 'deny' }> {
  if (decision.kind === 'allow') return decision;
  const { predicate } = decision;
  switch (action) {
    case 'create': {
      const guard = ownerPreset(policy, user);
      return { kind: 'filter', predicate, check: predicate, ...(guard === undefined ? {} : { guard }) };
    }
    case 'update':
      return { kind: 'filter', predicate, check: predicate };
    case 'read':
    case 'read_mine':
    case 'delete':
      return { kind: 'filter', predicate };
  }
}

export function createPortableAuthorizer(deps: PortableAuthorizerDeps): Authorizer {
  return {
    async authorize(request): Promise<Authorization> {
      const decided = await decideInProcess(deps.policies, request);
      if (decided.kind === 'denied') return { kind: 'deny', reason: decided.reason };
      const { action, user } = request;
      const { policy, decision } = decided;
      if (decision.kind === 'deny') return decision;
      const authorization = rowAuthorization(policy, decision, action, user);
      const columns = requestColumns({ ...request, ...decided }, portableCondition);
      return columns === undefined ? authorization : { ...authorization, columns };
    },
  };
}
