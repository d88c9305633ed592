// `rest policy explain <table> <action>`: how one request would be decided for a user, as the
// server decides it, and with --row what that makes of one stored row (runtime/explain-policy.ts),
// printed as text or JSON.

import type { CommandModule } from 'yargs';
import { ACTIONS } from '../../compiler/types.js';
import { listPolicies } from '../../runtime/policies/policy-service.js';
import { indexedColumns } from '../../runtime/policies/relation-health.js';
import { explainPolicy } from '../../runtime/explain-policy.js';
import { explainUser } from '../../runtime/explain-user.js';
import { rlsRoleFor } from '../../runtime/rls/rls-ddl.js';
import type { GlobalArgs } from '../config/global-options.js';
import { formatExplanation } from '../format/explanation.js';
import { formatJson } from '../output/json.js';
import {
  findTable,
  parseAction,
  requireAuthTables,
  withDatabase,
  type CommandContext,
} from './command-context.js';
import { EXPLAIN_USER_OPTIONS, explainUserSpec, type ExplainUserFlags } from './explain-user.js';

interface ExplainArgs extends GlobalArgs, ExplainUserFlags {
  readonly table: string;
  readonly action: string;
  readonly json: boolean;
  readonly row?: string | undefined;
}

export function policyExplainCommand(ctx: CommandContext): CommandModule<GlobalArgs, ExplainArgs> {
  return {
    command: 'explain <table> <action>',
    describe: 'Show how a request on <table> with <action> is decided for a user',
    builder: (y) =>
      y
        .positional('table', { type: 'string', demandOption: true, describe: 'A table of the database' })
        .positional('action', { type: 'string', demandOption: true, describe: ACTIONS.join(', ') })
        .options(EXPLAIN_USER_OPTIONS)
        .option('row', {
          type: 'string',
          describe:
            'The primary key of a stored row: is it visible/changeable for the user, and what decides it',
        })
        .option('json', { type: 'boolean', default: false, describe: 'Print the explanation as JSON' })
        .example(
          '$0 -db.url sqlite://./rest.db policy explain todos read --user 2',
          'Why user 2 sees which todos',
        )
        .example(
          '$0 policy explain todos update --user bob --row 17',
          'Whether bob may change todo 17, and why',
        )
        .example('$0 policy explain auth_users read --admin', 'What any admin gets')
        .example('$0 policy explain todos delete --anonymous', 'What an anonymous DELETE gets')
        .example(
          '$0 policy explain docs read --user 5 --claims \'{"org_id": 7}\' --json',
          'A claim-based policy, as JSON',
        ),
    handler: async (argv) => {
      const action = parseAction(argv.action);
      const spec = explainUserSpec(argv);
      const config = ctx.config(argv);
      const explanation = await withDatabase(config, async (adapter) => {
        const schema = await adapter.introspect();
        requireAuthTables(schema);
        const table = findTable(schema.tables, argv.table);
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
    },
  };
}
