// `rest policy compile` (cli/commands/policy-compile.ts), run.

import { postgresDialect } from '../../compiler/sql/postgres-dialect.js';
import type { TableInfo } from '../../runtime/db/adapter.js';
import { listPolicies } from '../../runtime/policies/policy-service.js';
import { compileTablesDdl, rlsRoleFor } from '../../runtime/rls/rls-ddl.js';
import { formatDdl } from '../output/ddl.js';
import { formatJson } from '../output/json.js';
import type { CommandContext } from '../context.js';
import { configOf, findTable, requireAuthTables, withDatabase } from './database.js';
import type { GlobalArgs } from '../config/global-options.js';

export interface CompileArgs extends GlobalArgs {
  readonly table?: string | undefined;
  readonly role?: string | undefined;
  readonly json: boolean;
}

const byName = (a: TableInfo, b: TableInfo): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

export async function run(ctx: CommandContext, argv: CompileArgs): Promise<void> {
  const config = configOf(ctx, argv);
  const { role, tables, kind } = await withDatabase(config, async (adapter) => {
    const schema = await adapter.introspect();
    requireAuthTables(schema);
    const chosen =
      argv.table === undefined ? [...schema.tables.values()].sort(byName) : [findTable(schema, argv.table)];
    const role = argv.role ?? (await rlsRoleFor(adapter, config.db.url));
    return {
      role,
      tables: compileTablesDdl(await listPolicies(adapter), chosen, role, schema),
      kind: adapter.kind,
    };
  });
  if (kind !== 'postgres') {
    ctx.io.stderr(
      `note: PostgreSQL DDL for role ${postgresDialect.quoteIdent(role)} (--role to change it); ` +
        `on ${kind} the policies are enforced as compiled WHERE predicates\n`,
    );
  }
  ctx.io.stdout(argv.json ? formatJson({ role, tables }) : formatDdl(role, tables));
}
