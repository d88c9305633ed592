// `rest auth setup`: the same setup as `POST /auth/setup`; prints the admin account once.

import type { CommandModule } from 'yargs';
import type { GlobalArgs } from '../config/global-options.js';
import { setupAuth } from '../../runtime/auth/setup.js';
import { formatJson } from '../output/json.js';
import { withDatabase, type CommandContext } from './command-context.js';

interface SetupArgs extends GlobalArgs {
  readonly json: boolean;
}

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
    handler: async (argv) => {
      const config = ctx.config(argv);
      const admin = await withDatabase(config, (adapter) => setupAuth(adapter, { dbUrl: config.db.url }));
      ctx.io.stdout(
        argv.json ? formatJson(admin) : `username: ${admin.username}\npassword: ${admin.password}\n`,
      );
      ctx.io.stderr('auth is set up; the admin password is shown only this once: store it now\n');
    },
  };
}
