// `rest auth user passwd` (cli/commands/auth-user-passwd.ts), run.

import { quoteValue } from '../../errors/quote-value.js';
import { setUserPassword } from '../../runtime/auth/user-admin.js';
import { formatJson } from '../output/json.js';
import { newPassword } from './password-prompt.js';
import { sessionsRevoked } from './user-change-text.js';
import type { CommandContext } from '../context.js';
import { configOf, withAuthDatabase } from './database.js';
import type { GlobalArgs } from '../config/global-options.js';

export interface PasswdArgs extends GlobalArgs {
  readonly username: string;
  readonly password: string | undefined;
  readonly json: boolean;
}

export async function run(ctx: CommandContext, argv: PasswdArgs): Promise<void> {
  const config = configOf(ctx, argv);
  const { password, generated } =
    argv.password === undefined
      ? await newPassword(argv.username, ctx.terminal)
      : { password: argv.password, generated: false };
  const changed = await withAuthDatabase(config, (adapter) =>
    setUserPassword(adapter, argv.username, password, { hasher: ctx.hasher }),
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
}
