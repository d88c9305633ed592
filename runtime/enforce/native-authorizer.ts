// The native enforcement path's Authorizer (docs/row-level-security.md): auth_user-only parts are decided
// in-process first (401/403, as on the portable path); everything the rows decide is left to the
// database's own policies, which are brought up to date before the request runs. On create, owner
// columns (`c = auth_user.id`) the body leaves out are filled with the user's id and another id is
// refused as on the portable path (owner_mismatch); the database's WITH CHECK judges the rest.

import type { PolicySet } from '../../compiler/policy-set.js';
import type { SchemaSnapshot, TableInfo } from '../db/adapter.js';
import type { Authorization, Authorizer, PolicySource } from './authorizer.js';
import { decideInProcess } from './decide.js';
import { ownerPreset } from './portable-authorizer.js';
import { nativeCondition, requestColumns } from './request-columns.js';

export interface RlsSync {
  /**
   * Resolves once the database's generated policies of `table` (of `schema`: subqueries read its
   * other tables) match `policies`; throws when they cannot.
   */
  ensure(table: TableInfo, policies: PolicySet, schema: SchemaSnapshot): Promise<void>;
}

export interface NativeAuthorizerDeps {
  readonly policies: PolicySource;
  readonly rls: RlsSync;
}

const ALLOW: Authorization = Object.freeze({ kind: 'allow' });

export function createNativeAuthorizer(deps: NativeAuthorizerDeps): Authorizer {
  return {
    async authorize(request): Promise<Authorization> {
      const decided = await decideInProcess(deps.policies, request);
      if (decided.kind === 'denied') return { kind: 'deny', reason: decided.reason };
      const { table, action, user, schema } = request;
      const { compiled, policy, decision } = decided;
      if (decision.kind === 'deny') return decision;
      await deps.rls.ensure(table, compiled, schema);
      const guard = action === 'create' && decision.kind === 'filter' ? ownerPreset(policy, user) : undefined;
      const columns = requestColumns({ ...request, ...decided }, nativeCondition);
      if (columns === undefined) return guard === undefined ? ALLOW : { kind: 'allow', guard };
      return { kind: 'allow', columns, ...(guard === undefined ? {} : { guard }) };
    },
  };
}
