// `rest auth user unlock <username>`: forgets the user's failed logins from every client address
// (the login throttle's unlock) and ends their sessions (docs/cli.md, docs/authentication.md).

import type { CommandModule } from 'yargs';
import type { GlobalArgs } from '../config/global-options.js';
import { type CommandContext, JSON_DONE_OPTION, lazyHandler, USERNAME_POSITIONAL } from '../context.js';
import type { UnlockArgs } from '../handlers/auth-user-unlock.js';

export function authUserUnlockCommand(ctx: CommandContext): CommandModule<GlobalArgs, UnlockArgs> {
  return {
    command: 'unlock <username>',
    describe: "Clear a user's login lock-outs (failed logins from every address); their sessions end",
    builder: (y) =>
      y
        .positional('username', USERNAME_POSITIONAL)
        .option('json', JSON_DONE_OPTION)
        .example('$0 auth user unlock bob', 'Let bob log in again at once'),
    handler: lazyHandler(() => import('../handlers/auth-user-unlock.js'), ctx),
  };
}
