// The floor on `auth_users` (docs/authentication.md): whatever the policies say, a non-admin never writes a
// user's `id`, `password` or `is_admin` through the table endpoints — a policy that lets users edit
// their own row must not let them promote themselves or skip `/auth/password`. Decided in-process
// on the request's values, before anything is written, on both enforcement paths.

import type { ColumnTypes } from '../../compiler/types.js';
import { compileCondition, outcomesForUser, TRUE } from '../../compiler/evaluate.js';
import type { Expr } from '../../compiler/index.js';
import type { AuthUser } from '../../compiler/types.js';
import { RestError } from '../../errors/rest-error.js';
import { AUTH_USERS_TABLE } from '../auth/auth-ddl.js';
import type { WriteGuard, WriteRow } from './authorizer.js';

/** The columns of `auth_users` only an admin writes. */
export const ADMIN_ONLY_USER_COLUMNS: readonly string[] = Object.freeze(['id', 'password', 'is_admin']);

const protectedColumn = (column: string): RestError =>
  new RestError(
    'protected_column',
    `only an admin may write ${column} of auth_users${column === 'password' ? '; change your own password with POST /auth/password' : ''}`,
    { details: { table: AUTH_USERS_TABLE, column }, category: 'forbidden' },
  );

function refuseProtected(row: WriteRow): void {
  const column = ADMIN_ONLY_USER_COLUMNS.find((c) => Object.hasOwn(row, c));
  if (column !== undefined) throw protectedColumn(column);
}

/** A logged-in user who is not an admin, with no claims: who the floor warning asks about. */
const NON_ADMIN: AuthUser = Object.freeze({
  id: 1,
  username: 'someone',
  is_admin: false,
  is_authenticated: true,
  claims: Object.freeze({}),
});

/**
 * docs/authentication.md: a policy on `auth_users` for create, update or all that can let a non-admin write is
 * accepted, but `policy add` and `policy explain` say that the floor still holds. Undefined when
 * the policy lets no non-admin (a subquery or a row it reads counts as "can").
 */
export function floorWarning(
  policy: { readonly table_name: string; readonly action: string },
  expr: Expr,
  columns?: ColumnTypes,
): string | undefined {
  if (policy.table_name !== AUTH_USERS_TABLE) return undefined;
  if (policy.action !== 'create' && policy.action !== 'update' && policy.action !== 'all') return undefined;
  if ((outcomesForUser(compileCondition(expr, columns), NON_ADMIN) & TRUE) === 0) return undefined;
  const what = policy.action === 'all' ? 'create or update' : policy.action;
  return `this policy lets users who are not admins ${what} rows of auth_users, but ${ADMIN_ONLY_USER_COLUMNS.join(', ')} stay admin-only whatever it says (403 protected_column); users change their own password with POST /auth/password`;
}

/** The floor's guard for `user`'s write to `auth_users`; undefined for an admin. */
export function usersFloor(user: AuthUser): WriteGuard | undefined {
  if (user.is_admin) return undefined;
  return {
    async prepareCreate(rows) {
      rows.forEach(refuseProtected);
      return rows;
    },
    async preparePatch(patch) {
      refuseProtected(patch);
      return patch;
    },
  };
}
