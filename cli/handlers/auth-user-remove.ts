// `rest auth user remove` (cli/commands/auth-user-remove.ts), run.

import { quoteValue } from '../../errors/quote-value.js';
import { removeUser } from '../../runtime/auth/user-admin.js';
import { formatJson } from '../output/json.js';
import { sessionsRevoked } from './user-change-text.js';
import type { CommandContext } from '../context.js';
import { configOf, withAuthDatabase } from './database.js';
import type { GlobalArgs } from '../config/global-options.js';

export interface RemoveArgs extends GlobalArgs {
  readonly username: string;
  readonly json: boolean;
}

export async function run(ctx: CommandContext, argv: RemoveArgs): Promise<void> {
  const removed = await withAuthDatabase(configOf(ctx, argv), (adapter) =>
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
}
