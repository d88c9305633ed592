// `rest auth user add` (cli/commands/auth-user-add.ts), run.

import { RestError } from '../../errors/rest-error.js';
import { registerUser } from '../../runtime/auth/users.js';
import { formatJson } from '../output/json.js';
import type { CommandContext } from '../context.js';
import { configOf, requireAuthTables, withDatabase } from './database.js';
import type { GlobalArgs } from '../config/global-options.js';

export interface AddArgs extends GlobalArgs {
  readonly username: string;
  readonly password: string;
  readonly is_admin: string;
  readonly json: boolean;
}

/** docs/cli.md: `is_admin` is `true` or `false`, nothing else. */
export function parseIsAdmin(text: string): boolean {
  if (text === 'true') return true;
  if (text === 'false') return false;
  throw new RestError('invalid_is_admin', `is_admin must be true or false, not '${text}'`);
}

export async function run(ctx: CommandContext, argv: AddArgs): Promise<void> {
  const isAdmin = parseIsAdmin(argv.is_admin);
  const config = configOf(ctx, argv);
  const user = await withDatabase(config, async (adapter) => {
    requireAuthTables(await adapter.introspect());
    return registerUser(
      adapter,
      { username: argv.username, password: argv.password, is_admin: isAdmin },
      { hasher: ctx.hasher },
    );
  });
  const added = { id: user.id, username: user.username, is_admin: isAdmin };
  ctx.io.stdout(
    argv.json
      ? formatJson(added)
      : `added user ${added.id} '${added.username}'${isAdmin ? ' (admin)' : ''}\n`,
  );
}
