// `rest auth user remove <username>`: deletes a user, ending their sessions (SPEC §1, §3.3).

import type { CommandModule } from 'yargs';
import type { GlobalArgs } from '../config/global-options.js';
import { quoteValue } from '../../errors/quote-value.js';
import { removeUser } from '../../runtime/auth/user-admin.js';
import { formatJson } from '../output/json.js';
import { withAuthDatabase, type CommandContext } from './command-context.js';
import { sessionsRevoked } from './user-change-text.js';

interface RemoveArgs extends GlobalArgs {
  readonly username: string;
  readonly json: boolean;
}

export function authUserRemoveCommand(ctx: CommandContext): CommandModule<GlobalArgs, RemoveArgs> {
  return {
    command: 'remove <username>',
    describe: 'Remove a user; their sessions end',
    builder: (y) =>
      y
        .positional('username', {
          type: 'string',
          demandOption: true,
          describe: 'Matched without regard to case, like a login',
        })
        .option('json', { type: 'boolean', default: false, describe: 'Print what was done as JSON' })
        .example('$0 auth user remove bob', 'Remove bob and log him out everywhere'),
    handler: async (argv) => {
      const removed = await withAuthDatabase(ctx.config(argv), (adapter) =>
        removeUser(adapter, argv.username),
      );
      ctx.io.stdout(
        argv.json
          ? formatJson({
              removed: removed.username,
              id: removed.id,
              sessions_revoked: removed.sessions_revoked,
            })
          : `removed user ${removed.id} ${quoteValue(removed.username)}; ${sessionsRevoked(removed.sessions_revoked)}\n`,
      );
    },
  };
}
