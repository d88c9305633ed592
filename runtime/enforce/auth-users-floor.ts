// The floor on `auth_users` (SPEC §3.4): whatever the policies say, a non-admin never writes a
// user's `id`, `password` or `is_admin` through the table endpoints — a policy that lets users edit
// their own row must not let them promote themselves or skip `/auth/password`. Decided in-process
// on the request's values, before anything is written, on both enforcement paths.

import type { AuthUser } from '../../compiler/types.js';
import { RestError } from '../../errors/rest-error.js';
import type { WriteGuard, WriteRow } from './authorizer.js';

/** The columns of `auth_users` only an admin writes. */
export const ADMIN_ONLY_USER_COLUMNS: readonly string[] = Object.freeze(['id', 'password', 'is_admin']);

const protectedColumn = (column: string): RestError =>
  new RestError(
    'forbidden',
    'protected_column',
    `only an admin may write ${column} of auth_users${column === 'password' ? '; change your own password with POST /auth/password' : ''}`,
    { details: { table: 'auth_users', column } },
  );

function refuseProtected(row: WriteRow): void {
  const column = ADMIN_ONLY_USER_COLUMNS.find((c) => Object.hasOwn(row, c));
  if (column !== undefined) throw protectedColumn(column);
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
