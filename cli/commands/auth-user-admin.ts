// `rest auth user admin <username> true|false`: grants or revokes admin, ending the user's sessions
// (SPEC §1, §3.3).

import type { CommandModule } from 'yargs';
import type { GlobalArgs } from '../config/global-options.js';
import { quoteValue } from '../../errors/quote-value.js';
import { setUserAdmin } from '../../runtime/auth/user-admin.js';
import { formatJson } from '../output/json.js';
import { parseIsAdmin } from './auth-user-add.js';
import { withAuthDatabase, type CommandContext } from './command-context.js';
import { sessionsRevoked } from './user-change-text.js';

interface AdminArgs extends GlobalArgs {
  readonly username: string;
  readonly is_admin: string;
  readonly json: boolean;
}

export function authUserAdminCommand(ctx: CommandContext): CommandModule<GlobalArgs, AdminArgs> {
  return {
    command: 'admin <username> <is_admin>',
    describe: "Grant (true) or revoke (false) admin; the user's sessions end",
    builder: (y) =>
      y
        .positional('username', {
          type: 'string',
          demandOption: true,
          describe: 'Matched without regard to case, like a login',
        })
        .positional('is_admin', { type: 'string', demandOption: true, describe: 'true or false' })
        .option('json', { type: 'boolean', default: false, describe: 'Print what was done as JSON' })
        .example('$0 auth user admin alice true', 'Make alice an admin')
        .example('$0 auth user admin alice false', 'Demote her again, at once'),
    handler: async (argv) => {
      const isAdmin = parseIsAdmin(argv.is_admin);
      const changed = await withAuthDatabase(ctx.config(argv), (adapter) =>
        setUserAdmin(adapter, argv.username, isAdmin),
      );
      const state =
        changed.was_admin === isAdmin
          ? isAdmin
            ? 'was already an admin'
            : 'was not an admin'
          : isAdmin
            ? 'is now an admin'
            : 'is no longer an admin';
      ctx.io.stdout(
        argv.json
          ? formatJson({
              username: changed.username,
              id: changed.id,
              is_admin: changed.is_admin,
              was_admin: changed.was_admin,
              sessions_revoked: changed.sessions_revoked,
            })
          : `user ${changed.id} ${quoteValue(changed.username)} ${state}; ${sessionsRevoked(changed.sessions_revoked)}\n`,
      );
    },
  };
}
