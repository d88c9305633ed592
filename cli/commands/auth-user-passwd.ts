// `rest auth user passwd <username> [<password>]`: sets a user's password, validated like register,
// and ends their sessions (docs/cli.md, docs/authentication.md). Without a password: asked twice at a terminal (not
// echoed), or generated and printed once when standard input is not a terminal.

import type { CommandModule } from 'yargs';
import type { GlobalArgs } from '../config/global-options.js';
import { type CommandContext, JSON_DONE_OPTION, lazyHandler, USERNAME_POSITIONAL } from '../context.js';
import type { PasswdArgs } from '../handlers/auth-user-passwd.js';

export function authUserPasswdCommand(ctx: CommandContext): CommandModule<GlobalArgs, PasswdArgs> {
  return {
    command: 'passwd <username> [password]',
    describe:
      "Set a user's password (prompted, or generated when stdin is not a terminal); their sessions end",
    builder: (y) =>
      y
        .positional('username', USERNAME_POSITIONAL)
        .positional('password', {
          type: 'string',
          describe: '8-72 UTF-8 bytes; omitted: prompted or generated',
        })
        .option('json', JSON_DONE_OPTION)
        .example('$0 auth user passwd bob', 'Type a new password for bob (not echoed)')
        .example('$0 auth user passwd bob < /dev/null', 'Generate one and print it once'),
    handler: lazyHandler(() => import('../handlers/auth-user-passwd.js'), ctx),
  };
}
