// `rest auth policy edit` (cli/commands/auth-policy-edit.ts), run.

import { PolicySyntaxError } from '../../compiler/index.js';
import { RestError } from '../../errors/rest-error.js';
import { editPolicy, parsePolicyId, type PolicyChanges } from '../../runtime/policies/policy-admin.js';
import { listPolicies, policyWarnings, storedEscalations } from '../../runtime/policies/policy-service.js';
import { formatJson } from '../output/json.js';
import { caretLines, describeRow, errorText } from './auth-policy-add.js';
import type { CommandContext } from '../context.js';
import { configOf, withAuthDatabase } from './database.js';
import type { GlobalArgs } from '../config/global-options.js';

export interface EditArgs extends GlobalArgs {
  readonly id: string;
  readonly table: string | undefined;
  readonly action: string | undefined;
  readonly expression: string | undefined;
  readonly description: string | undefined;
  readonly columns: string | undefined;
  readonly json: boolean;
}

/** The options given, as the fields they replace; none → usage error (exit 1). */
function changesOf(argv: EditArgs): PolicyChanges {
  const changes: PolicyChanges = {
    ...(argv.table === undefined ? {} : { table_name: argv.table }),
    ...(argv.action === undefined ? {} : { action: argv.action }),
    ...(argv.expression === undefined ? {} : { expression: argv.expression }),
    ...(argv.description === undefined ? {} : { description: argv.description }),
    ...(argv.columns === undefined ? {} : { columns: argv.columns }),
  };
  if (Object.keys(changes).length === 0) {
    throw new RestError(
      'nothing_to_change',
      'auth policy edit needs at least one of --table, --action, --expression, --description, --columns (see rest --help)',
    );
  }
  return changes;
}

export async function run(ctx: CommandContext, argv: EditArgs): Promise<void> {
  const id = parsePolicyId(argv.id);
  const changes = changesOf(argv);
  const { row, warnings } = await withAuthDatabase(configOf(ctx, argv), async (adapter) => {
    const schema = await adapter.introspect();
    try {
      const edited = await editPolicy(adapter, schema, id, changes);
      const escalations = await storedEscalations(adapter, schema);
      return {
        row: edited,
        warnings: [...policyWarnings(edited, schema), ...escalations.map((w) => w.message)],
      };
    } catch (e) {
      // The caret points into the text that was validated: the new one, or the stored one.
      if (e instanceof PolicySyntaxError) {
        const stored = (await listPolicies(adapter)).find((r) => r.id === id);
        const text = errorText(e, { ...stored, ...changes });
        if (typeof text === 'string') ctx.io.stderr(caretLines(text, e));
      }
      throw e;
    }
  });
  for (const warning of warnings) ctx.io.stderr(`rest: warning: ${warning}\n`);
  ctx.io.stdout(argv.json ? formatJson(row) : `changed policy ${row.id}: ${describeRow(row)}\n`);
}
