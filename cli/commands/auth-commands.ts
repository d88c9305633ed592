// `rest auth …`: setup, the anonymous API key, users and policies, through the services the HTTP side calls.

import type { Argv, CommandModule } from 'yargs';
import type { GlobalArgs } from '../config/global-options.js';
import { authAnonKeyCommand } from './auth-anon-key.js';
import { authPolicyAddCommand } from './auth-policy-add.js';
import { authPolicyEditCommand } from './auth-policy-edit.js';
import { authPolicyListCommand } from './auth-policy-list.js';
import { authPolicyRemoveCommand } from './auth-policy-remove.js';
import { authSetupCommand } from './auth-setup.js';
import { authUserAddCommand } from './auth-user-add.js';
import { authUserAdminCommand } from './auth-user-admin.js';
import { authUserListCommand } from './auth-user-list.js';
import { authUserPasswdCommand } from './auth-user-passwd.js';
import { authUserRemoveCommand } from './auth-user-remove.js';
import { authUserUnlockCommand } from './auth-user-unlock.js';
import type { CommandContext } from '../context.js';

/** A command that only groups others: one of them must follow. */
const group = (y: Argv, name: string, commands: string): Argv =>
  y.demandCommand(1, `${name} needs a command: ${commands}`).strictCommands();

export function authCommand(ctx: CommandContext): CommandModule<GlobalArgs, GlobalArgs> {
  return {
    command: 'auth',
    describe: 'Set up authentication, manage users and policies',
    builder: (y) =>
      group(
        y
          .command(authSetupCommand(ctx))
          .command(authAnonKeyCommand(ctx))
          .command({
            command: 'user',
            describe: 'List, add, remove or change users',
            builder: (u) =>
              group(
                u
                  .command(authUserListCommand(ctx))
                  .command(authUserAddCommand(ctx))
                  .command(authUserRemoveCommand(ctx))
                  .command(authUserPasswdCommand(ctx))
                  .command(authUserAdminCommand(ctx))
                  .command(authUserUnlockCommand(ctx))
                  .example('$0 auth user add alice "correct horse battery" false', 'Add a regular user'),
                'auth user',
                'list, add, remove, passwd, admin or unlock',
              ),
            handler: () => {},
          })
          .command({
            command: 'policy',
            describe: 'List, add, remove or edit policies',
            builder: (p) =>
              group(
                p
                  .command(authPolicyListCommand(ctx))
                  .command(authPolicyAddCommand(ctx))
                  .command(authPolicyRemoveCommand(ctx))
                  .command(authPolicyEditCommand(ctx))
                  .example("$0 auth policy add posts read '' 'posts are public'", 'Anyone reads posts'),
                'auth policy',
                'list, add, remove or edit',
              ),
            handler: () => {},
          })
          .example(
            '$0 -db.url sqlite://./rest.db auth setup',
            'Create the auth tables and the admin account',
          ),
        'auth',
        'setup, anon-key, user or policy',
      ),
    handler: () => {},
  };
}
