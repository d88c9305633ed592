// `rest auth policy remove` (cli/commands/auth-policy-remove.ts), run.

import { parsePolicyId, removePolicy } from '../../runtime/policies/policy-admin.js';
import { formatJson } from '../output/json.js';
import { escapeCell } from '../output/text-cell.js';
import type { RemoveArgs } from '../commands/auth-policy-remove.js';
import type { CommandContext } from '../commands/command-context.js';
import { configOf, requireAuthTables, withDatabase } from './database.js';

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
