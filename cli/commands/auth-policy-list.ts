// `rest auth policy list`: every row of auth_policies, each marked when it is broken (it no longer
// parses, names a missing table or column, …: it allows nothing until fixed).

import type { CommandModule } from 'yargs';
import type { GlobalArgs } from '../config/global-options.js';
import { lazyHandler, type CommandContext } from '../context.js';
import type { ListArgs } from '../handlers/auth-policy-list.js';

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
    handler: lazyHandler(() => import('../handlers/auth-policy-list.js'), ctx),
  };
}
