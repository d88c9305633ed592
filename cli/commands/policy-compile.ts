// `rest policy compile [--table <t>]`: the PostgreSQL row-level security DDL the compiler
// generates from auth_policies (runtime/rls/rls-ddl.ts), for every table or one, ready to review
// or to hand to a migration tool.

import type { CommandModule } from 'yargs';
import type { GlobalArgs } from '../config/global-options.js';
import { lazyHandler, type CommandContext } from '../context.js';
import type { CompileArgs } from '../handlers/policy-compile.js';

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
    handler: lazyHandler(() => import('../handlers/policy-compile.js'), ctx),
  };
}
