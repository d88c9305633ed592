// How a policy's `auth_user.<attr>` and claims become SQL. The portable path binds them as
// parameters filled per request; native RLS reads them from the request's session settings
// (compiler/rls/session-settings.ts SESSION_BINDING). The walker (compile-predicate.ts) asks the
// binding and knows neither.

import type { AuthNode } from '../../grammar/ast.js';
import type { ClaimTarget } from '../semantics.js';
import type { SqlBuilder } from './fragment.js';

export interface AuthBinding {
  auth(b: SqlBuilder, attr: AuthNode['attr']): void;
  claim(b: SqlBuilder, name: string, as: ClaimTarget | 'presence'): void;
}

/** PostgreSQL casts of bound values; other dialects ignore them. */
const authCasts: Readonly<Record<AuthNode['attr'], string>> = {
  id: 'bigint',
  username: 'text',
  is_admin: 'boolean',
  is_authenticated: 'boolean',
};
const claimCasts: Readonly<Record<ClaimTarget | 'presence', string>> = {
  number: 'numeric',
  text: 'text',
  boolean: 'boolean',
  presence: 'boolean',
};

/** Bound parameters, filled from the request's user when the statement is rendered. */
export const PARAMETER_BINDING: AuthBinding = Object.freeze<AuthBinding>({
  auth(b, attr) {
    b.appendAuth({ kind: attr }, authCasts[attr]);
  },
  claim(b, name, as) {
    b.appendAuth({ kind: 'claim', name, as }, claimCasts[as]);
  },
});
