// The native enforcement path's Authorizer (SPEC §4.6): auth_user-only parts are decided
// in-process first (401/403, as on the portable path); everything the rows decide is left to the
// database's own policies, which are brought up to date before the request runs. On create, owner
// columns (`c = auth_user.id`) the body leaves out are filled with the user's id and another id is
// refused as on the portable path (owner_mismatch); the database's WITH CHECK judges the rest.

import type { CompiledPolicy, PolicySet } from '../../compiler/policy-set.js';
import type { AuthUser } from '../../compiler/types.js';
import type { TableInfo } from '../db/adapter.js';
import type { Authorization, Authorizer, WriteGuard } from '../plan/authorizer.js';
import type { PolicyCache } from '../policy-cache.js';
import { decideInProcess, fillOwnerColumns } from '../policies/portable-authorizer.js';

export interface RlsSync {
  /** Resolves once the database's generated policies of `table` match `policies`; throws when they cannot. */
  ensure(table: TableInfo, policies: PolicySet): Promise<void>;
}

export interface NativeAuthorizerDeps {
  readonly policies: Pick<PolicyCache<PolicySet>, 'get'>;
  readonly rls: RlsSync;
}

const ALLOW: Authorization = Object.freeze({ kind: 'allow' });

const ownerFill = (policy: CompiledPolicy, user: AuthUser): WriteGuard => ({
  prepareCreate: async (rows) => rows.map((row) => fillOwnerColumns(policy, user, row)),
});

export function createNativeAuthorizer(deps: NativeAuthorizerDeps): Authorizer {
  return {
    async authorize(request): Promise<Authorization> {
      const decided = await decideInProcess(deps.policies, request);
      if (decided.kind === 'denied') return decided.denial;
      const { table, action, user } = request;
      const { compiled, policy, decision } = decided;
      if (decision.kind === 'deny') return { kind: 'deny' };
      await deps.rls.ensure(table, compiled);
      if (action === 'create' && decision.kind === 'filter' && policy.ownerColumns.length > 0) {
        return { kind: 'allow', guard: ownerFill(policy, user) };
      }
      return ALLOW;
    },
  };
}
