// `rest policy explain <table> <action>`: how one request would be decided for a user, as the
// server decides it, and with --row what that makes of one stored row (runtime/explain/explain-policy.ts),
// printed as text or JSON.

import type { CommandModule } from 'yargs';
import { ACTIONS } from '../../compiler/types.js';
import type { GlobalArgs } from '../config/global-options.js';
import { EXPLAIN_USER_OPTIONS } from './explain-user.js';
import { lazyHandler, type CommandContext } from '../context.js';
import type { ExplainArgs } from '../handlers/policy-explain.js';

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
    handler: lazyHandler(() => import('../handlers/policy-explain.js'), ctx),
  };
}
