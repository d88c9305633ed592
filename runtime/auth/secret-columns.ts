// Columns no endpoint ever returns, selects, filters or orders on, and no policy may name:
// `auth_users.password` (a bcrypt hash, docs/http-api.md) and the auth tables' hidden helper columns.

import { AUTH_USERS_TABLE } from './auth-ddl.js';

const SECRET_COLUMNS: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  [AUTH_USERS_TABLE, new Set(['password', 'username_key'])],
]);

export function isSecretColumn(table: string, column: string): boolean {
  return SECRET_COLUMNS.get(table)?.has(column) === true;
}

/** The secret columns of `table` (empty for ordinary tables). */
export function secretColumnsOf(table: string): ReadonlySet<string> {
  return SECRET_COLUMNS.get(table) ?? new Set();
}
