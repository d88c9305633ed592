// The portable enforcement path (docs/row-level-security.md), for SQLite, MySQL/MariaDB and PostgreSQL with
// `-db.rls off`: the cached compiled policy decides auth_user parts in-process; its predicate is
// AND-ed into read/read_mine/update/delete, and is the check the database evaluates on the rows
// a create or update stored, inside the write's transaction (owner columns filled on create).

import type { CompiledPolicy } from '../../compiler/policy-set.js';
import type { AuthUser } from '../../compiler/types.js';
import type { Authorization, Authorizer, PolicySource, WriteGuard } from './authorizer.js';
import { decideInProcess, fillOwnerColumns } from './decide.js';

export interface PortableAuthorizerDeps {
  readonly policies: PolicySource;
}

/** create: owner columns filled with the user's id (another id → 403 owner_mismatch). */
export const ownerPreset = (policy: CompiledPolicy, user: AuthUser): WriteGuard | undefined =>
  policy.ownerColumns.length === 0
    ? undefined
    : { prepareCreate: async (rows) => rows.map((row) => fillOwnerColumns(policy, user, row)) };

export function createPortableAuthorizer(deps: PortableAuthorizerDeps): Authorizer {
  return {
    async authorize(request): Promise<Authorization> {
      const decided = await decideInProcess(deps.policies, request);
      if (decided.kind === 'denied') return { kind: 'deny', reason: decided.reason };
      const { action, user } = request;
      const { policy, decision } = decided;
      switch (decision.kind) {
        case 'deny':
        case 'allow':
          return decision;
        case 'filter': {
          const { predicate } = decision;
          switch (action) {
            case 'create': {
              const guard = ownerPreset(policy, user);
              return {
                kind: 'filter',
                predicate,
                check: predicate,
                ...(guard === undefined ? {} : { guard }),
              };
            }
            case 'update':
              return { kind: 'filter', predicate, check: predicate };
            case 'read':
            case 'read_mine':
            case 'delete':
              return { kind: 'filter', predicate };
          }
        }
      }
    },
  };
}
