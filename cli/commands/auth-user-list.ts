// `rest auth user list`: id, username and is_admin of every user (never the password hash), and
// whether the login throttle locks them out (from some client address) and until when.

import type { CommandModule } from 'yargs';
import type { GlobalArgs } from '../config/global-options.js';
import { createLoginRateLimiter } from '../../runtime/auth/rate-limiter.js';
import { listUsersWithLockouts, type ListedUser } from '../../runtime/auth/user-admin.js';
import { formatJson } from '../output/json.js';
import { formatTable, type TableColumn } from '../output/table.js';
import { withAuthDatabase, type CommandContext } from './command-context.js';

interface ListArgs extends GlobalArgs {
  readonly json: boolean;
}

const USER_COLUMNS: readonly TableColumn<ListedUser>[] = [
  { header: 'id', value: (u) => u.id, align: 'right' },
  { header: 'username', value: (u) => u.username },
  { header: 'is_admin', value: (u) => u.is_admin },
  { header: 'locked', value: (u) => (u.locked_until === null ? 'no' : `until ${u.locked_until}`) },
];

export function authUserListCommand(ctx: CommandContext): CommandModule<GlobalArgs, ListArgs> {
  return {
    command: 'list',
    describe: 'List the users: id, username, is_admin, and whether failed logins lock them out',
    builder: (y) =>
      y
        .option('json', {
          type: 'boolean',
          default: false,
          describe: 'Print a JSON array instead of a table',
        })
        .example('$0 -db.url sqlite://./rest.db auth user list', 'Show every user')
        .example('$0 auth user list --json', 'The same as JSON, for scripts'),
    handler: async (argv) => {
      const users = await withAuthDatabase(ctx.config(argv), async (adapter) =>
        listUsersWithLockouts(adapter, await createLoginRateLimiter({ adapter }).lockouts()),
      );
      ctx.io.stdout(argv.json ? formatJson(users) : formatTable(USER_COLUMNS, users));
    },
  };
}
