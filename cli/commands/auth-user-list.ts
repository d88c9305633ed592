// `rest auth user list`: id, username and is_admin of every user (never the password hash), and
// whether the login throttle locks them out (from some client address) and until when.

import type { CommandModule } from 'yargs';
import type { GlobalArgs } from '../config/global-options.js';
import { lazyHandler, type CommandContext } from '../context.js';
import type { ListArgs } from '../handlers/auth-user-list.js';

export function authUserListCommand(ctx: CommandContext): CommandModule<GlobalArgs, ListArgs> {
  return {
    command: 'list',
    describe: 'List the users: id, username, is_admin, and whether failed logins lock them out',
    builder: (y) =>
      y
        .option('json', {
          type: 'boolean',
          default: false,
          describe: 'Print a JSON array instead of a table',
        })
        .example('$0 -db.url sqlite://./rest.db auth user list', 'Show every user')
        .example('$0 auth user list --json', 'The same as JSON, for scripts'),
    handler: lazyHandler(() => import('../handlers/auth-user-list.js'), ctx),
  };
}
