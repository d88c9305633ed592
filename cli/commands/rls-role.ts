// The PostgreSQL role that native-RLS requests run as, which the generated policies are for: the
// server's own choice for this database (runtime/rls/request-role.ts) unless --role names another.

import { basename, extname } from 'node:path';
import type { DbAdapter } from '../../runtime/db/adapter.js';
import { parseDbUrl } from '../../runtime/db/parse-db-url.js';
import { requestRoleName } from '../../runtime/rls/request-role.js';

/**
 * On PostgreSQL the role of the connected database. Elsewhere, the role a PostgreSQL database of
 * the same name would get (the MySQL database name, the SQLite file name without extension).
 */
export async function rlsRoleFor(adapter: Pick<DbAdapter, 'kind' | 'query'>, dbUrl: string): Promise<string> {
  if (adapter.kind === 'postgres') {
    const { rows } = await adapter.query({ text: 'SELECT current_database() AS database', values: [] });
    return requestRoleName(String(rows[0]?.['database']));
  }
  const url = parseDbUrl(dbUrl);
  return requestRoleName(url.kind === 'sqlite' ? basename(url.path, extname(url.path)) : url.database);
}
