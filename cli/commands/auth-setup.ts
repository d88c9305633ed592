// `rest auth setup`: the same setup as `POST /auth/setup`; prints the admin account once.

import type { CommandModule } from 'yargs';
import type { GlobalArgs } from '../config/global-options.js';
import { lazyHandler, type CommandContext } from '../context.js';
import type { SetupArgs } from '../handlers/auth-setup.js';

export function authSetupCommand(ctx: CommandContext): CommandModule<GlobalArgs, SetupArgs> {
  return {
    command: 'setup',
    describe: 'Create the auth tables, the default policies and the admin account (once)',
    builder: (y) =>
      y
        .option('json', {
          type: 'boolean',
          default: false,
          describe: 'Print {"username", "password"} as JSON',
        })
        .example(
          '$0 -db.url postgres://app@db/app auth setup',
          'Set up auth and print the admin password once',
        ),
    handler: lazyHandler(() => import('../handlers/auth-setup.js'), ctx),
  };
}
