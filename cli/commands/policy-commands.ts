// `rest policy …`: explain how a request is decided; compile the PostgreSQL RLS DDL.

import type { CommandModule } from 'yargs';
import type { GlobalArgs } from '../config/global-options.js';
import type { CommandContext } from '../context.js';
import { policyCompileCommand } from './policy-compile.js';
import { policyExplainCommand } from './policy-explain.js';
import { policyTestCommand } from './policy-test.js';

export function policyCommand(ctx: CommandContext): CommandModule<GlobalArgs, GlobalArgs> {
  return {
    command: 'policy',
    describe: 'Explain policy decisions, compile row-level security DDL, run policy tests',
    builder: (y) =>
      y
        .command(policyExplainCommand(ctx))
        .command(policyCompileCommand(ctx))
        .command(policyTestCommand(ctx))
        .demandCommand(1, 'policy needs a command: explain, compile or test')
        .strictCommands()
        .example('$0 policy explain todos read --user 2', 'How a read of todos by user 2 is decided'),
    handler: () => {},
  };
}
