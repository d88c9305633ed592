// `rest auth policy add <table_name> <action> <expression> <description>`: validated and stored
// by the same service as `POST /auth_policies`; a bad expression is echoed with a caret
// under the error column.

import type { CommandModule } from 'yargs';
import type { GlobalArgs } from '../config/global-options.js';
import { formatPolicyError, PolicySyntaxError } from '../../compiler/index.js';
import { addPolicy, policyWarnings } from '../../runtime/policies/policy-service.js';
import { formatJson } from '../output/json.js';
import { escapeCell } from '../output/text-cell.js';
import { requireAuthTables, withDatabase, type CommandContext } from './command-context.js';

interface AddArgs extends GlobalArgs {
  readonly table_name: string;
  readonly action: string;
  readonly expression: string;
  readonly description: string;
  readonly json: boolean;
}

// Controls and bidi characters in the echoed line become '?', one for one, so the terminal shows
// the text as written and the caret stays under the right column (tabs are kept for the same reason).
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const UNPRINTABLE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** The offending line of the expression and a caret under the error column, indented. */
export function caretLines(expression: string, error: PolicySyntaxError): string {
  const [line = '', caret = ''] = formatPolicyError(expression, error).split('\n');
  return `  ${line.replace(UNPRINTABLE, '?')}\n  ${caret}\n`;
}

export function authPolicyAddCommand(ctx: CommandContext): CommandModule<GlobalArgs, AddArgs> {
  return {
    command: 'add <table_name> <action> <expression> <description>',
    describe: 'Add a policy after validation (like POST /auth_policies); nothing is written when invalid',
    builder: (y) =>
      y
        .positional('table_name', {
          type: 'string',
          demandOption: true,
          describe: "An existing table, or 'all'",
        })
        .positional('action', {
          type: 'string',
          demandOption: true,
          describe: 'create, read, update, delete, read_mine or all',
        })
        .positional('expression', {
          type: 'string',
          demandOption: true,
          describe: "Who may, e.g. 'user_id = auth_user.id' ('' = anyone)",
        })
        .positional('description', {
          type: 'string',
          demandOption: true,
          describe: 'Why the policy exists (at most 256 characters)',
        })
        .option('json', { type: 'boolean', default: false, describe: 'Print the stored row as JSON' })
        .example(
          "$0 auth policy add todos read 'user_id = auth_user.id' 'users read their own todos'",
          'Owners read their rows',
        )
        .example("$0 auth policy add posts read '' 'posts are public'", 'Anyone reads posts'),
    handler: async (argv) => {
      const config = ctx.config(argv);
      const { row, warnings } = await withDatabase(config, async (adapter) => {
        const schema = await adapter.introspect();
        requireAuthTables(schema);
        const input = {
          table_name: argv.table_name,
          action: argv.action,
          expression: argv.expression,
          description: argv.description,
        };
        try {
          const added = await addPolicy(adapter, schema, input);
          return { row: added, warnings: policyWarnings(added, schema) };
        } catch (e) {
          // cli/main.ts prints the error itself (line:column, what was expected) as the last line.
          if (e instanceof PolicySyntaxError) ctx.io.stderr(caretLines(argv.expression, e));
          throw e;
        }
      });
      for (const warning of warnings) ctx.io.stderr(`rest: warning: ${warning}\n`);
      ctx.io.stdout(
        argv.json
          ? formatJson(row)
          : `added policy ${row.id}: ${row.table_name} ${row.action} '${escapeCell(row.expression)}'\n`,
      );
    },
  };
}
