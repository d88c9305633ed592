// The PostgreSQL row-level security DDL as the server's reconciler applies it, for people to read:
// each table's statements (`rest policy compile`, `rest policy explain`) and the role they are for.

import { basename, extname } from 'node:path';
import { compilePolicySet, type PolicySet } from '../../compiler/policy-set.js';
import { postgresDialect } from '../../compiler/sql/postgres-dialect.js';
import type { PolicyRow } from '../../compiler/types.js';
import type { DbAdapter, SchemaSnapshot, TableInfo } from '../db/adapter.js';
import { parseDbUrl } from '../db/parse-db-url.js';
import { grantStatements, tableRls, withheldFrom } from './reconcile.js';
import { requestRoleName } from './request-role.js';

export interface TableDdl {
  readonly table: string;
  readonly statements: readonly string[];
}

/** One table of `schema`'s DDL for `role`, from an already compiled policy set. */
export const tableDdl = (
  table: TableInfo,
  policies: PolicySet,
  role: string,
  schema: SchemaSnapshot,
): TableDdl => {
  const withheld = withheldFrom(table, policies, schema);
  const { statements } = tableRls(table, policies, role, schema);
  // The column privileges, where some column is withheld (the table-wide grant is the default).
  return {
    table: table.name,
    statements:
      withheld.length === 0 ? statements : [...grantStatements(table, role, withheld), ...statements],
  };
};

/** The DDL of each table of `schema` as the server applies it, in the order given. */
export function compileTablesDdl(
  rows: readonly PolicyRow[],
  tables: readonly TableInfo[],
  role: string,
  schema: SchemaSnapshot,
): TableDdl[] {
  const policies = compilePolicySet(rows, postgresDialect);
  return tables.map((t) => tableDdl(t, policies, role, schema));
}

/**
 * The role native-RLS requests run as, which the generated policies are for: on PostgreSQL the
 * server's own choice for the connected database; elsewhere the role a PostgreSQL database of the
 * same name would get (the MySQL database name, the SQLite file name without extension).
 */
export async function rlsRoleFor(adapter: Pick<DbAdapter, 'kind' | 'query'>, dbUrl: string): Promise<string> {
  if (adapter.kind === 'postgres') {
    const { rows } = await adapter.query({ text: 'SELECT current_database() AS database', values: [] });
    return requestRoleName(String(rows[0]?.['database']));
  }
  const url = parseDbUrl(dbUrl);
  return requestRoleName(url.kind === 'sqlite' ? basename(url.path, extname(url.path)) : url.database);
}
