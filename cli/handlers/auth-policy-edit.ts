// `rest auth policy edit` (cli/commands/auth-policy-edit.ts), run.

import { PolicySyntaxError } from '../../compiler/index.js';
import { RestError } from '../../errors/rest-error.js';
import { editPolicy, parsePolicyId, type PolicyChanges } from '../../runtime/policies/policy-admin.js';
import { listPolicies, policyWarnings, storedEscalations } from '../../runtime/policies/policy-service.js';
import { formatJson } from '../output/json.js';
import { escapeCell } from '../output/text-cell.js';
import { caretLines } from './auth-policy-add.js';
import type { CommandContext } from '../context.js';
import { configOf, requireAuthTables, withDatabase } from './database.js';
import type { GlobalArgs } from '../config/global-options.js';

export interface EditArgs extends GlobalArgs {
  readonly id: string;
  readonly table: string | undefined;
  readonly action: string | undefined;
  readonly expression: string | undefined;
  readonly description: string | undefined;
  readonly json: boolean;
}

/** The options given, as the fields they replace; none → usage error (exit 1). */
function changesOf(argv: EditArgs): PolicyChanges {
  const changes: PolicyChanges = {
    ...(argv.table === undefined ? {} : { table_name: argv.table }),
    ...(argv.action === undefined ? {} : { action: argv.action }),
    ...(argv.expression === undefined ? {} : { expression: argv.expression }),
    ...(argv.description === undefined ? {} : { description: argv.description }),
  };
  if (Object.keys(changes).length === 0) {
    throw new RestError(
      'nothing_to_change',
      'auth policy edit needs at least one of --table, --action, --expression, --description (see rest --help)',
    );
  }
  return changes;
}

export async function run(ctx: CommandContext, argv: EditArgs): Promise<void> {
  const id = parsePolicyId(argv.id);
  const changes = changesOf(argv);
  const { row, warnings } = await withDatabase(configOf(ctx, argv), async (adapter) => {
    const schema = await adapter.introspect();
    requireAuthTables(schema);
    try {
      const edited = await editPolicy(adapter, schema, id, changes);
      const escalations = await storedEscalations(adapter, schema);
      return {
        row: edited,
        warnings: [...policyWarnings(edited, schema), ...escalations.map((w) => w.message)],
      };
    } catch (e) {
      // The caret points into the expression that was validated: the new one, or the stored one.
      if (e instanceof PolicySyntaxError) {
        const expression =
          changes.expression ?? (await listPolicies(adapter)).find((r) => r.id === id)?.expression;
        if (expression !== undefined) ctx.io.stderr(caretLines(expression, e));
      }
      throw e;
    }
  });
  for (const warning of warnings) ctx.io.stderr(`rest: warning: ${warning}\n`);
  ctx.io.stdout(
    argv.json
      ? formatJson(row)
      : `changed policy ${row.id}: ${row.table_name} ${row.action} '${escapeCell(row.expression)}'\n`,
  );
}
