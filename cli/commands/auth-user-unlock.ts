// `rest auth user unlock <username>`: forgets the user's failed logins from every client address
// (the login throttle's unlock) and ends their sessions (SPEC §1, §3.3).

import type { CommandModule } from 'yargs';
import type { GlobalArgs } from '../config/global-options.js';
import { lazyHandler, type CommandContext } from './command-context.js';

export interface UnlockArgs extends GlobalArgs {
  readonly username: string;
  readonly json: boolean;
}

export function authUserUnlockCommand(ctx: CommandContext): CommandModule<GlobalArgs, UnlockArgs> {
  return {
    command: 'unlock <username>',
    describe: "Clear a user's login lock-outs (failed logins from every address); their sessions end",
    builder: (y) =>
      y
        .positional('username', {
          type: 'string',
          demandOption: true,
          describe: 'Matched without regard to case, like a login',
        })
        .option('json', { type: 'boolean', default: false, describe: 'Print what was done as JSON' })
        .example('$0 auth user unlock bob', 'Let bob log in again at once'),
    handler: lazyHandler(() => import('../handlers/auth-user-unlock.js'), ctx),
  };
}
