// `rest auth policy add <table_name> <action> <expression> <description> [--columns <rule>]`: validated and stored
// by the same service as `POST /auth_policies`; a bad expression is echoed with a caret
// under the error column.

import type { CommandModule } from 'yargs';
import type { GlobalArgs } from '../config/global-options.js';
import { lazyHandler, type CommandContext } from '../context.js';
import type { AddArgs } from '../handlers/auth-policy-add.js';

export function authPolicyAddCommand(ctx: CommandContext): CommandModule<GlobalArgs, AddArgs> {
  return {
    command: 'add <table_name> <action> <expression> <description>',
    describe: 'Add a policy after validation (like POST /auth_policies); nothing is written when invalid',
    builder: (y) =>
      y
        .positional('table_name', {
          type: 'string',
          demandOption: true,
          describe: "An existing table, or 'all'",
        })
        .positional('action', {
          type: 'string',
          demandOption: true,
          describe: 'create, read, update, delete, read_mine or all',
        })
        .positional('expression', {
          type: 'string',
          demandOption: true,
          describe: "Who may, e.g. 'user_id = auth_user.id' ('' = anyone)",
        })
        .positional('description', {
          type: 'string',
          demandOption: true,
          describe: 'Why the policy exists (at most 256 characters)',
        })
        .option('columns', {
          type: 'string',
          describe: "The columns it grants: 'a, b', '* except (a)' or '*' (the default: every column)",
        })
        .option('json', { type: 'boolean', default: false, describe: 'Print the stored row as JSON' })
        .example(
          "$0 auth policy add todos read 'user_id = auth_user.id' 'users read their own todos'",
          'Owners read their rows',
        )
        .example("$0 auth policy add posts read '' 'posts are public'", 'Anyone reads posts')
        .example(
          "$0 auth policy add users read '' 'names are public' --columns 'id, name'",
          'Anyone reads two columns',
        ),
    handler: lazyHandler(() => import('../handlers/auth-policy-add.js'), ctx),
  };
}
