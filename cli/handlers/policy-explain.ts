// `rest policy explain` (cli/commands/policy-explain.ts), run.

import { listPolicies } from '../../runtime/policies/policy-service.js';
import { indexedColumns } from '../../runtime/policies/relation-health.js';
import { explainPolicy } from '../../runtime/explain/explain-policy.js';
import { explainUser } from '../../runtime/explain/explain-user.js';
import { rlsRoleFor } from '../../runtime/rls/rls-ddl.js';
import { formatExplanation } from '../output/explanation.js';
import { formatJson } from '../output/json.js';
import { explainUserSpec } from './explain-user-flags.js';
import type { CommandContext } from '../context.js';
import { configOf, findTable, parseAction, requireAuthTables, withDatabase } from './database.js';
import type { GlobalArgs } from '../config/global-options.js';
import type { ExplainUserFlags } from './explain-user-flags.js';

export interface ExplainArgs extends GlobalArgs, ExplainUserFlags {
  readonly table: string;
  readonly action: string;
  readonly json: boolean;
  readonly row?: string | undefined;
}

export async function run(ctx: CommandContext, argv: ExplainArgs): Promise<void> {
  const action = parseAction(argv.action);
  const spec = explainUserSpec(argv);
  const config = configOf(ctx, argv);
  const explanation = await withDatabase(config, async (adapter) => {
    const schema = await adapter.introspect();
    requireAuthTables(schema);
    const table = findTable(schema, argv.table);
    return await explainPolicy({
      rows: await listPolicies(adapter),
      table,
      schema,
      indexes: await indexedColumns(adapter, schema),
      action,
      user: await explainUser(adapter, spec),
      adapter,
      ...(argv.row === undefined ? {} : { row: { key: argv.row, db: adapter } }),
      authEnabled: config.auth.enabled,
      nativeRls: adapter.kind === 'postgres' && config.db.rls,
      rlsRole: adapter.kind === 'postgres' ? await rlsRoleFor(adapter, config.db.url) : undefined,
    });
  });
  ctx.io.stdout(argv.json ? formatJson(explanation) : formatExplanation(explanation));
}
