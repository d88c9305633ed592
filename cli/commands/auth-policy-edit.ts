// `rest auth policy edit <id> [--table t] [--action a] [--expression e] [--description d]`: changes
// one policy row; the row as it would be stored is validated exactly like `auth policy add` (SPEC
// §4.5, cycles included) and nothing is written when it is invalid; it warns like add (SPEC §3.4).

import type { CommandModule } from 'yargs';
import type { GlobalArgs } from '../config/global-options.js';
import { PolicySyntaxError } from '../../compiler/index.js';
import { RestError } from '../../errors/rest-error.js';
import { editPolicy, parsePolicyId, type PolicyChanges } from '../../runtime/policies/policy-admin.js';
import { listPolicies, policyWarnings } from '../../runtime/policies/policy-service.js';
import { formatJson } from '../output/json.js';
import { escapeCell } from '../output/text-cell.js';
import { caretLines } from './auth-policy-add.js';
import { requireAuthTables, withDatabase, type CommandContext } from './command-context.js';

interface EditArgs extends GlobalArgs {
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
      'usage',
      'nothing_to_change',
      'auth policy edit needs at least one of --table, --action, --expression, --description (see rest --help)',
    );
  }
  return changes;
}

export function authPolicyEditCommand(ctx: CommandContext): CommandModule<GlobalArgs, EditArgs> {
  return {
    command: 'edit <id>',
    describe: 'Change a policy, validated like add; nothing is written when invalid',
    builder: (y) =>
      y
        .positional('id', {
          type: 'string',
          demandOption: true,
          describe: 'The id shown by auth policy list',
        })
        .option('table', { type: 'string', describe: "New table_name: an existing table, or 'all'" })
        .option('action', {
          type: 'string',
          describe: 'New action: create, read, update, delete, read_mine or all',
        })
        .option('expression', { type: 'string', describe: "New expression ('' = anyone)" })
        .option('description', { type: 'string', describe: 'New description (at most 256 characters)' })
        .option('json', { type: 'boolean', default: false, describe: 'Print the stored row as JSON' })
        .example("$0 auth policy edit 4 --expression 'author_id = auth_user.id'", 'Narrow policy 4'),
    handler: async (argv) => {
      const id = parsePolicyId(argv.id);
      const changes = changesOf(argv);
      const { row, warnings } = await withDatabase(ctx.config(argv), async (adapter) => {
        const schema = await adapter.introspect();
        requireAuthTables(schema);
        try {
          const edited = await editPolicy(adapter, schema, id, changes);
          return { row: edited, warnings: policyWarnings(edited, schema) };
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
    },
  };
}
