// `rest auth policy list` (cli/commands/auth-policy-list.ts), run.

import { listPoliciesChecked, type ListedPolicy } from '../../runtime/policies/policy-service.js';
import type { CommandContext } from '../context.js';
import { formatJson } from '../output/json.js';
import { formatTable, type TableColumn } from '../output/table.js';
import { configOf, requireAuthTables, withDatabase } from './database.js';
import type { GlobalArgs } from '../config/global-options.js';

export interface ListArgs extends GlobalArgs {
  readonly json: boolean;
}

const POLICY_COLUMNS: readonly TableColumn<ListedPolicy>[] = [
  { header: 'id', value: (p) => p.id, align: 'right' },
  { header: 'table_name', value: (p) => p.table_name },
  { header: 'action', value: (p) => p.action },
  { header: 'expression', value: (p) => p.expression },
  // NULL: every column, written as the rule that says so.
  { header: 'columns', value: (p) => p.columns ?? '*' },
  { header: 'description', value: (p) => p.description },
  { header: 'status', value: statusOf },
];

/** `ok`, or why the row allows nothing, or the escalations it takes part in (docs/policy-language.md). */
function statusOf(p: ListedPolicy): string {
  if (p.error !== null) return `BROKEN: ${p.error}`;
  return p.warnings.length === 0 ? 'ok' : `WARNING: ${p.warnings.join('; ')}`;
}

export async function run(ctx: CommandContext, argv: ListArgs): Promise<void> {
  const policies = await withDatabase(configOf(ctx, argv), async (adapter) => {
    const schema = await adapter.introspect();
    requireAuthTables(schema);
    return listPoliciesChecked(adapter, schema);
  });
  ctx.io.stdout(argv.json ? formatJson(policies) : formatTable(POLICY_COLUMNS, policies));
}
