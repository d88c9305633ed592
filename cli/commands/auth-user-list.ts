// `rest auth user list`: id, username and is_admin of every user (never the password hash).

import type { CommandModule } from 'yargs';
import type { GlobalArgs } from '../config/global-options.js';
import { listUsers, type PublicUser } from '../../runtime/auth/users.js';
import { formatJson } from '../output/json.js';
import { formatTable, type TableColumn } from '../output/table.js';
import { requireAuthTables, withDatabase, type CommandContext } from './command-context.js';

interface ListArgs extends GlobalArgs {
  readonly json: boolean;
}

const USER_COLUMNS: readonly TableColumn<PublicUser>[] = [
  { header: 'id', value: (u) => u.id, align: 'right' },
  { header: 'username', value: (u) => u.username },
  { header: 'is_admin', value: (u) => u.is_admin },
];

export function authUserListCommand(ctx: CommandContext): CommandModule<GlobalArgs, ListArgs> {
  return {
    command: 'list',
    describe: 'List the users: id, username, is_admin',
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
      const config = ctx.config(argv);
      const users = await withDatabase(config, async (adapter) => {
        requireAuthTables(await adapter.introspect());
        return listUsers(adapter);
      });
      ctx.io.stdout(argv.json ? formatJson(users) : formatTable(USER_COLUMNS, users));
    },
  };
}
