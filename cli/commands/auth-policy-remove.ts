// `rest auth policy remove <id>`: deletes one policy row (docs/cli.md); an unknown id changes nothing.

import type { CommandModule } from 'yargs';
import type { GlobalArgs } from '../config/global-options.js';
import { lazyHandler, type CommandContext } from '../context.js';
import type { RemoveArgs } from '../handlers/auth-policy-remove.js';

export function authPolicyRemoveCommand(ctx: CommandContext): CommandModule<GlobalArgs, RemoveArgs> {
  return {
    command: 'remove <id>',
    describe: 'Remove a policy',
    builder: (y) =>
      y
        .positional('id', {
          type: 'string',
          demandOption: true,
          describe: 'The id shown by auth policy list',
        })
        .option('json', { type: 'boolean', default: false, describe: 'Print the removed row as JSON' })
        .example('$0 auth policy remove 4', 'Remove policy 4'),
    handler: lazyHandler(() => import('../handlers/auth-policy-remove.js'), ctx),
  };
}
