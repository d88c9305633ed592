// `rest policy test <files…> [--format text|json|junit] [--path native|portable|all]`: runs policy
// test files (docs/policy-tests.md), each in a transaction that is rolled back.

import type { CommandModule } from 'yargs';
import type { GlobalArgs } from '../config/global-options.js';
import { lazyHandler, type CommandContext } from '../context.js';
import type { PolicyTestArgs } from '../handlers/policy-test.js';

export function policyTestCommand(ctx: CommandContext): CommandModule<GlobalArgs, PolicyTestArgs> {
  return {
    command: 'test <files..>',
    describe: 'Run policy test files; exit 0 all pass, 4 a case failed, 2 a file is invalid',
    builder: (y) =>
      y
        // Every file named, not the last only (the CLI's flags keep their last value).
        .parserConfiguration({
          'dot-notation': false,
          'duplicate-arguments-array': true,
          'camel-case-expansion': false,
        })
        .positional('files', {
          type: 'string',
          array: true,
          demandOption: true,
          describe: 'Test files (YAML)',
        })
        .option('format', {
          choices: ['text', 'json', 'junit'] as const,
          default: 'text' as const,
          describe: 'text for people, json or junit (JUnit XML) for CI',
        })
        .option('path', {
          choices: ['all', 'native', 'portable'] as const,
          default: 'all' as const,
          describe: 'PostgreSQL: the enforcement paths to run each file on (default both)',
        })
        .example('$0 -db.url postgres://app@db/app policy test policies/*.yml', 'Both paths on PostgreSQL')
        .example('$0 policy test cases.yml --format junit > policy-tests.xml', 'A report for CI'),
    handler: lazyHandler(() => import('../handlers/policy-test.js'), ctx),
  };
}
