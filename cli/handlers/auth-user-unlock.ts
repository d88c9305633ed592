// `rest auth user unlock` (cli/commands/auth-user-unlock.ts), run.

import { quoteValue } from '../../errors/quote-value.js';
import { createLoginRateLimiter } from '../../runtime/auth/rate-limiter.js';
import { unlockUser } from '../../runtime/auth/user-admin.js';
import { formatJson } from '../output/json.js';
import { sessionsRevoked } from './user-change-text.js';
import type { CommandContext } from '../context.js';
import { configOf, withAuthDatabase } from './database.js';
import type { GlobalArgs } from '../config/global-options.js';

export interface UnlockArgs extends GlobalArgs {
  readonly username: string;
  readonly json: boolean;
}

export async function run(ctx: CommandContext, argv: UnlockArgs): Promise<void> {
  const unlocked = await withAuthDatabase(configOf(ctx, argv), (adapter) =>
    unlockUser(adapter, argv.username, createLoginRateLimiter({ adapter })),
  );
  ctx.io.stdout(
    argv.json
      ? formatJson({
          unlocked: unlocked.username,
          id: unlocked.id,
          throttle_rows_cleared: unlocked.throttle_rows_cleared,
          sessions_revoked: unlocked.sessions_revoked,
        })
      : `unlocked user ${unlocked.id} ${quoteValue(unlocked.username)}; ${sessionsRevoked(unlocked.sessions_revoked)}\n`,
  );
}
