// `rest auth user admin` (cli/commands/auth-user-admin.ts), run.

import { quoteValue } from '../../errors/quote-value.js';
import { setUserAdmin } from '../../runtime/auth/user-admin.js';
import { formatJson } from '../output/json.js';
import { parseIsAdmin } from './auth-user-add.js';
import { sessionsRevoked } from './user-change-text.js';
import type { CommandContext } from '../context.js';
import { configOf, withAuthDatabase } from './database.js';
import type { GlobalArgs } from '../config/global-options.js';

export interface AdminArgs extends GlobalArgs {
  readonly username: string;
  readonly is_admin: string;
  readonly json: boolean;
}

export async function run(ctx: CommandContext, argv: AdminArgs): Promise<void> {
  const isAdmin = parseIsAdmin(argv.is_admin);
  const changed = await withAuthDatabase(configOf(ctx, argv), (adapter) =>
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
}
