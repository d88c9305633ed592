// `rest auth user remove <username>`: deletes a user, ending their sessions (docs/cli.md, docs/authentication.md).

import type { CommandModule } from 'yargs';
import type { GlobalArgs } from '../config/global-options.js';
import { type CommandContext, JSON_DONE_OPTION, lazyHandler, USERNAME_POSITIONAL } from '../context.js';
import type { RemoveArgs } from '../handlers/auth-user-remove.js';

export function authUserRemoveCommand(ctx: CommandContext): CommandModule<GlobalArgs, RemoveArgs> {
  return {
    command: 'remove <username>',
    describe: 'Remove a user; their sessions end',
    builder: (y) =>
      y
        .positional('username', USERNAME_POSITIONAL)
        .option('json', JSON_DONE_OPTION)
        .example('$0 auth user remove bob', 'Remove bob and log him out everywhere'),
    handler: lazyHandler(() => import('../handlers/auth-user-remove.js'), ctx),
  };
}
