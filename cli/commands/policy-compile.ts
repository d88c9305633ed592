// `rest policy compile [--table <t>]`: the PostgreSQL row-level security DDL the compiler
// generates from auth_policies (runtime/rls/rls-ddl.ts), for every table or one, ready to review
// or to hand to a migration tool.

import type { CommandModule } from 'yargs';
import { postgresDialect } from '../../compiler/sql/dialect.js';
import type { TableInfo } from '../../runtime/db/adapter.js';
import { listPolicies } from '../../runtime/policies/policy-service.js';
import { compileTablesDdl, rlsRoleFor } from '../../runtime/rls/rls-ddl.js';
import type { GlobalArgs } from '../config/global-options.js';
import { formatDdl } from '../format/ddl.js';
import { formatJson } from '../output/json.js';
import { findTable, requireAuthTables, withDatabase, type CommandContext } from './command-context.js';

interface CompileArgs extends GlobalArgs {
  readonly table?: string | undefined;
  readonly role?: string | undefined;
  readonly json: boolean;
}

const byName = (a: TableInfo, b: TableInfo): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

export function policyCompileCommand(ctx: CommandContext): CommandModule<GlobalArgs, CompileArgs> {
  return {
    command: 'compile',
    describe: 'Print the PostgreSQL row-level security DDL generated from the policies',
    builder: (y) =>
      y
        .option('table', { type: 'string', describe: 'Only this table (default: every table)' })
        .option('role', {
          type: 'string',
          describe: "The role the policies are for (default: the server's request role for this database)",
        })
        .option('json', {
          type: 'boolean',
          default: false,
          describe: 'Print {role, tables: [{table, statements}]} as JSON',
        })
        .example(
          '$0 -db.url postgres://app@db/app policy compile > rls.sql',
          'Every table, for review or a migration',
        )
        .example('$0 policy compile --table todos', 'One table'),
    handler: async (argv) => {
      const config = ctx.config(argv);
      const { role, tables, kind } = await withDatabase(config, async (adapter) => {
        const schema = await adapter.introspect();
        requireAuthTables(schema);
        const chosen =
          argv.table === undefined
            ? [...schema.tables.values()].sort(byName)
            : [findTable(schema.tables, argv.table)];
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
    },
  };
}
