// `rest auth user passwd <username> [<password>]`: sets a user's password, validated like register,
// and ends their sessions (SPEC §1, §3.3). Without a password: asked twice at a terminal (not
// echoed), or generated and printed once when standard input is not a terminal.

import type { CommandModule } from 'yargs';
import type { GlobalArgs } from '../config/global-options.js';
import { quoteValue } from '../../errors/quote-value.js';
import { setUserPassword } from '../../runtime/auth/user-admin.js';
import { formatJson } from '../output/json.js';
import { withAuthDatabase, type CommandContext } from './command-context.js';
import { newPassword } from './password-prompt.js';
import { sessionsRevoked } from './user-change-text.js';

interface PasswdArgs extends GlobalArgs {
  readonly username: string;
  readonly password: string | undefined;
  readonly json: boolean;
}

export function authUserPasswdCommand(ctx: CommandContext): CommandModule<GlobalArgs, PasswdArgs> {
  return {
    command: 'passwd <username> [password]',
    describe:
      "Set a user's password (prompted, or generated when stdin is not a terminal); their sessions end",
    builder: (y) =>
      y
        .positional('username', {
          type: 'string',
          demandOption: true,
          describe: 'Matched without regard to case, like a login',
        })
        .positional('password', {
          type: 'string',
          describe: '8-72 UTF-8 bytes; omitted: prompted or generated',
        })
        .option('json', { type: 'boolean', default: false, describe: 'Print what was done as JSON' })
        .example('$0 auth user passwd bob', 'Type a new password for bob (not echoed)')
        .example('$0 auth user passwd bob < /dev/null', 'Generate one and print it once'),
    handler: async (argv) => {
      const config = ctx.config(argv);
      const { password, generated } =
        argv.password === undefined
          ? await newPassword(argv.username, ctx.terminal)
          : { password: argv.password, generated: false };
      const changed = await withAuthDatabase(config, (adapter) =>
        setUserPassword(adapter, argv.username, password),
      );
      const shown = generated ? { password } : {};
      ctx.io.stdout(
        argv.json
          ? formatJson({
              username: changed.username,
              id: changed.id,
              ...shown,
              generated,
              sessions_revoked: changed.sessions_revoked,
            })
          : `password of user ${changed.id} ${quoteValue(changed.username)} set; ${sessionsRevoked(changed.sessions_revoked)}\n${
              generated ? `password: ${password}\n` : ''
            }`,
      );
      if (generated) ctx.io.stderr('the generated password is shown only this once: store it now\n');
    },
  };
}
