// `rest auth policy add` (cli/commands/auth-policy-add.ts), run; a bad expression is echoed with a
// caret under the error column.

import { formatPolicyError, PolicySyntaxError } from '../../compiler/index.js';
import type { PolicyRow } from '../../compiler/types.js';
import { addPolicy, policyWarnings, storedEscalations } from '../../runtime/policies/policy-service.js';
import type { CommandContext } from '../context.js';
import { formatJson } from '../output/json.js';
import { escapeCell } from '../output/text-cell.js';
import { configOf, withAuthDatabase } from './database.js';
import type { GlobalArgs } from '../config/global-options.js';

export interface AddArgs extends GlobalArgs {
  readonly table_name: string;
  readonly action: string;
  readonly expression: string;
  readonly description: string;
  readonly columns: string | undefined;
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

/** The policy field a syntax error is in: the column rule when it says so, else the expression. */
export const errorText = (
  error: PolicySyntaxError,
  texts: { readonly expression?: string | undefined; readonly columns?: string | null | undefined },
): string | null | undefined => (error.details?.['field'] === 'columns' ? texts.columns : texts.expression);

/** `table action 'expression'`, and `columns '<rule>'` when the row does not grant every column. */
export const describeRow = (row: PolicyRow): string =>
  `${row.table_name} ${row.action} '${escapeCell(row.expression)}'${
    row.columns === null ? '' : ` columns '${escapeCell(row.columns)}'`
  }`;

export async function run(ctx: CommandContext, argv: AddArgs): Promise<void> {
  const config = configOf(ctx, argv);
  // withAuthDatabase: a database set up by an older version gains `auth_policies.columns` first.
  const { row, warnings } = await withAuthDatabase(config, async (adapter) => {
    const schema = await adapter.introspect();
    const input = {
      table_name: argv.table_name,
      action: argv.action,
      expression: argv.expression,
      description: argv.description,
      columns: argv.columns,
    };
    try {
      const added = await addPolicy(adapter, schema, input);
      const escalations = await storedEscalations(adapter, schema);
      return {
        row: added,
        warnings: [...policyWarnings(added, schema), ...escalations.map((w) => w.message)],
      };
    } catch (e) {
      // cli/main.ts prints the error itself (line:column, what was expected) as the last line.
      if (e instanceof PolicySyntaxError) ctx.io.stderr(caretLines(errorText(e, argv) ?? '', e));
      throw e;
    }
  });
  for (const warning of warnings) ctx.io.stderr(`rest: warning: ${warning}\n`);
  ctx.io.stdout(argv.json ? formatJson(row) : `added policy ${row.id}: ${describeRow(row)}\n`);
}
