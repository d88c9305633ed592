// `rest auth setup` (cli/commands/auth-setup.ts), run.

import { migrationUrlOf, setupAuth } from '../../runtime/auth/setup.js';
import type { CommandContext } from '../context.js';
import { formatJson } from '../output/json.js';
import { configOf, withDatabase } from './database.js';
import type { GlobalArgs } from '../config/global-options.js';

export interface SetupArgs extends GlobalArgs {
  readonly json: boolean;
}

export async function run(ctx: CommandContext, argv: SetupArgs): Promise<void> {
  const config = configOf(ctx, argv);
  const admin = await withDatabase(config, (adapter) =>
    setupAuth(adapter, { dbUrl: migrationUrlOf(config), hasher: ctx.hasher }),
  );
  ctx.io.stdout(argv.json ? formatJson(admin) : `username: ${admin.username}\npassword: ${admin.password}\n`);
  ctx.io.stderr('auth is set up; the admin password is shown only this once: store it now\n');
}
