// `rest auth user add <username> <password> <is_admin>`: registers a user through the same
// service and rules as `POST /auth/register`.

import type { CommandModule } from 'yargs';
import type { GlobalArgs } from '../config/global-options.js';
import { RestError } from '../../errors/rest-error.js';
import { registerUser } from '../../runtime/auth/users.js';
import { formatJson } from '../output/json.js';
import { requireAuthTables, withDatabase, type CommandContext } from './command-context.js';

interface AddArgs extends GlobalArgs {
  readonly username: string;
  readonly password: string;
  readonly is_admin: string;
  readonly json: boolean;
}

/** SPEC §1: `is_admin` is `true` or `false`, nothing else. */
export function parseIsAdmin(text: string): boolean {
  if (text === 'true') return true;
  if (text === 'false') return false;
  throw new RestError('invalid_input', 'invalid_is_admin', `is_admin must be true or false, not '${text}'`);
}

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
    handler: async (argv) => {
      const isAdmin = parseIsAdmin(argv.is_admin);
      const config = ctx.config(argv);
      const user = await withDatabase(config, async (adapter) => {
        requireAuthTables(await adapter.introspect());
        return registerUser(adapter, { username: argv.username, password: argv.password, is_admin: isAdmin });
      });
      const added = { id: user.id, username: user.username, is_admin: isAdmin };
      ctx.io.stdout(
        argv.json
          ? formatJson(added)
          : `added user ${added.id} '${added.username}'${isAdmin ? ' (admin)' : ''}\n`,
      );
    },
  };
}
