// `rest auth anon-key` (cli/commands/auth-anon-key.ts), run: needs the secret, no database.

import { RestError } from '../../errors/rest-error.js';
import { signAnonKey } from '../../runtime/auth/tokens.js';
import type { GlobalArgs } from '../config/global-options.js';
import type { CommandContext } from '../context.js';
import { configOf } from './database.js';

export async function run(ctx: CommandContext, argv: GlobalArgs): Promise<void> {
  const { secret } = configOf(ctx, argv).auth;
  if (secret === null) {
    throw new RestError(
      'secret_required',
      'auth anon-key signs with the server secret: give it with -auth.secret, REST_AUTH_SECRET or auth.secret in the config file',
    );
  }
  ctx.io.stdout(`${await signAnonKey(secret)}\n`);
}
