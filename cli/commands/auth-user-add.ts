// `rest auth user add <username> <password> <is_admin>`: registers a user through the same
// service and rules as `POST /auth/register`.

import type { CommandModule } from 'yargs';
import type { GlobalArgs } from '../config/global-options.js';
import { lazyHandler, type CommandContext } from '../context.js';
import type { AddArgs } from '../handlers/auth-user-add.js';

export function authUserAddCommand(ctx: CommandContext): CommandModule<GlobalArgs, AddArgs> {
  return {
    command: 'add <username> <password> <is_admin>',
    describe: 'Add a user (validated like POST /auth/register)',
    builder: (y) =>
      y
        .positional('username', {
          type: 'string',
          demandOption: true,
          describe: '1-32 characters, unique without regard to case',
        })
        .positional('password', {
          type: 'string',
          demandOption: true,
          describe: '8-72 UTF-8 bytes',
        })
        .positional('is_admin', { type: 'string', demandOption: true, describe: 'true or false' })
        .option('json', { type: 'boolean', default: false, describe: 'Print the new user as JSON' })
        .example('$0 auth user add alice "correct horse battery" false', 'Add a regular user'),
    handler: lazyHandler(() => import('../handlers/auth-user-add.js'), ctx),
  };
}
