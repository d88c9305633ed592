// `rest auth policy remove` (cli/commands/auth-policy-remove.ts), run.

import { parsePolicyId, removePolicy } from '../../runtime/policies/policy-admin.js';
import { formatJson } from '../output/json.js';
import { escapeCell } from '../output/text-cell.js';
import type { CommandContext } from '../context.js';
import { configOf, requireAuthTables, withDatabase } from './database.js';
import type { GlobalArgs } from '../config/global-options.js';

export interface RemoveArgs extends GlobalArgs {
  readonly id: string;
  readonly json: boolean;
}

export async function run(ctx: CommandContext, argv: RemoveArgs): Promise<void> {
  const id = parsePolicyId(argv.id);
  const row = await withDatabase(configOf(ctx, argv), async (adapter) => {
    requireAuthTables(await adapter.introspect());
    return removePolicy(adapter, id);
  });
  ctx.io.stdout(
    argv.json
      ? formatJson({ removed: row })
      : `removed policy ${row.id}: ${row.table_name} ${row.action} '${escapeCell(row.expression)}'\n`,
  );
}
