// The text of `rest policy compile`: the row-level security DDL of each table, ready for psql or a
// migration tool.

import { postgresDialect } from '../../compiler/sql/postgres-dialect.js';
import type { TableDdl } from '../../runtime/rls/rls-ddl.js';

const q = postgresDialect.quoteIdent;

export function formatDdl(role: string, ddl: readonly TableDdl[]): string {
  const header = `-- row-level security compiled by rest from auth_policies, for role ${q(role)}\n\n`;
  return (
    header +
    ddl
      .map((t) => [`-- table ${q(t.table)}`, ...t.statements.map((s) => `${s};`)].join('\n'))
      .join('\n\n')
      .concat(ddl.length === 0 ? '' : '\n')
  );
}
