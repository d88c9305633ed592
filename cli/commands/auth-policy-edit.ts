// `rest auth policy edit <id> [--table t] [--action a] [--expression e] [--description d] [--columns c]`: changes
// one policy row; the row as it would be stored is validated exactly like `auth policy add`
// (docs/policy-language.md, cycles included) and nothing is written when it is invalid; it warns
// like add (docs/authentication.md).

import type { CommandModule } from 'yargs';
import type { GlobalArgs } from '../config/global-options.js';
import { lazyHandler, type CommandContext } from '../context.js';
import type { EditArgs } from '../handlers/auth-policy-edit.js';

export function authPolicyEditCommand(ctx: CommandContext): CommandModule<GlobalArgs, EditArgs> {
  return {
    command: 'edit <id>',
    describe: 'Change a policy, validated like add; nothing is written when invalid',
    builder: (y) =>
      y
        .positional('id', {
          type: 'string',
          demandOption: true,
          describe: 'The id shown by auth policy list',
        })
        .option('table', { type: 'string', describe: "New table_name: an existing table, or 'all'" })
        .option('action', {
          type: 'string',
          describe: 'New action: create, read, update, delete, read_mine or all',
        })
        .option('expression', { type: 'string', describe: "New expression ('' = anyone)" })
        .option('description', { type: 'string', describe: 'New description (at most 256 characters)' })
        .option('columns', { type: 'string', describe: "New column rule ('*' = every column)" })
        .option('json', { type: 'boolean', default: false, describe: 'Print the stored row as JSON' })
        .example("$0 auth policy edit 4 --expression 'author_id = auth_user.id'", 'Narrow policy 4'),
    handler: lazyHandler(() => import('../handlers/auth-policy-edit.js'), ctx),
  };
}
