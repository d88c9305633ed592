// `rest auth policy remove` (cli/commands/auth-policy-remove.ts), run.

import { parsePolicyId, removePolicy } from '../../runtime/policies/policy-admin.js';
import { storedEscalations } from '../../runtime/policies/policy-service.js';
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
  const { row, warnings } = await withDatabase(configOf(ctx, argv), async (adapter) => {
    const schema = await adapter.introspect();
    requireAuthTables(schema);
    const removed = await removePolicy(adapter, id);
    return { row: removed, warnings: await storedEscalations(adapter, schema) };
  });
  for (const warning of warnings) ctx.io.stderr(`rest: warning: ${warning.message}\n`);
  ctx.io.stdout(
    argv.json
      ? formatJson({ removed: row })
      : `removed policy ${row.id}: ${row.table_name} ${row.action} '${escapeCell(row.expression)}'\n`,
  );
}
