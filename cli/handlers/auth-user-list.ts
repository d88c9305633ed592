// `rest auth user list` (cli/commands/auth-user-list.ts), run.

import { createLoginRateLimiter } from '../../runtime/auth/rate-limiter.js';
import { listUsersWithLockouts, type ListedUser } from '../../runtime/auth/user-admin.js';
import { formatJson } from '../output/json.js';
import { formatTable, type TableColumn } from '../output/table.js';
import type { CommandContext } from '../context.js';
import { configOf, withAuthDatabase } from './database.js';
import type { GlobalArgs } from '../config/global-options.js';

export interface ListArgs extends GlobalArgs {
  readonly json: boolean;
}

const USER_COLUMNS: readonly TableColumn<ListedUser>[] = [
  { header: 'id', value: (u) => u.id, align: 'right' },
  { header: 'username', value: (u) => u.username },
  { header: 'is_admin', value: (u) => u.is_admin },
  { header: 'locked', value: (u) => (u.locked_until === null ? 'no' : `until ${u.locked_until}`) },
];

export async function run(ctx: CommandContext, argv: ListArgs): Promise<void> {
  const users = await withAuthDatabase(configOf(ctx, argv), async (adapter) =>
    listUsersWithLockouts(adapter, await createLoginRateLimiter({ adapter }).lockouts()),
  );
  ctx.io.stdout(argv.json ? formatJson(users) : formatTable(USER_COLUMNS, users));
}
