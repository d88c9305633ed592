// `rest auth policy list`: every row of auth_policies, each marked when it is broken (it no longer
// parses, names a missing table or column, …: it allows nothing until fixed).

import type { CommandModule } from 'yargs';
import type { GlobalArgs } from '../config/global-options.js';
import { listPoliciesChecked, type ListedPolicy } from '../../runtime/policies/policy-service.js';
import { formatJson } from '../output/json.js';
import { formatTable, type TableColumn } from '../output/table.js';
import { requireAuthTables, withDatabase, type CommandContext } from './command-context.js';

interface ListArgs extends GlobalArgs {
  readonly json: boolean;
}

const POLICY_COLUMNS: readonly TableColumn<ListedPolicy>[] = [
  { header: 'id', value: (p) => p.id, align: 'right' },
  { header: 'table_name', value: (p) => p.table_name },
  { header: 'action', value: (p) => p.action },
  { header: 'expression', value: (p) => p.expression },
  { header: 'description', value: (p) => p.description },
  { header: 'status', value: (p) => (p.error === null ? 'ok' : `BROKEN: ${p.error}`) },
];

export function authPolicyListCommand(ctx: CommandContext): CommandModule<GlobalArgs, ListArgs> {
  return {
    command: 'list',
    describe:
      'List the policies: id, table_name, action, expression, description, and whether each is broken',
    builder: (y) =>
      y
        .option('json', {
          type: 'boolean',
          default: false,
          describe: 'Print a JSON array instead of a table',
        })
        .example('$0 -db.url sqlite://./rest.db auth policy list', 'Show every policy'),
    handler: async (argv) => {
      const config = ctx.config(argv);
      const policies = await withDatabase(config, async (adapter) => {
        const schema = await adapter.introspect();
        requireAuthTables(schema);
        return listPoliciesChecked(adapter, schema);
      });
      ctx.io.stdout(argv.json ? formatJson(policies) : formatTable(POLICY_COLUMNS, policies));
    },
  };
}
