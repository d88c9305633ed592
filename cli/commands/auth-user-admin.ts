// `rest auth user admin <username> true|false`: grants or revokes admin, ending the user's sessions
// (docs/cli.md, docs/authentication.md).

import type { CommandModule } from 'yargs';
import type { GlobalArgs } from '../config/global-options.js';
import { type CommandContext, JSON_DONE_OPTION, lazyHandler, USERNAME_POSITIONAL } from '../context.js';
import type { AdminArgs } from '../handlers/auth-user-admin.js';

export function authUserAdminCommand(ctx: CommandContext): CommandModule<GlobalArgs, AdminArgs> {
  return {
    command: 'admin <username> <is_admin>',
    describe: "Grant (true) or revoke (false) admin; the user's sessions end",
    builder: (y) =>
      y
        .positional('username', USERNAME_POSITIONAL)
        .positional('is_admin', { type: 'string', demandOption: true, describe: 'true or false' })
        .option('json', JSON_DONE_OPTION)
        .example('$0 auth user admin alice true', 'Make alice an admin')
        .example('$0 auth user admin alice false', 'Demote her again, at once'),
    handler: lazyHandler(() => import('../handlers/auth-user-admin.js'), ctx),
  };
}
