// cli/skip-help-cache.ts reaches into yargs' internals: this fails when a yargs upgrade moves
// them, instead of every command silently rendering its help again.

import yargs from 'yargs';
import { describe, expect, it } from 'vitest';
import { skipHelpCache } from '../../../cli/skip-help-cache.js';

describe('skipHelpCache', () => {
  it('finds the help cache of the yargs in use', () => {
    expect(skipHelpCache(yargs())).toBe(true);
  });

  it('leaves help itself alone: a command is still described by --help after one ran', async () => {
    const build = () =>
      yargs()
        .command(
          'list',
          'List the things',
          (y) => y.option('json', { type: 'boolean' }),
          () => {},
        )
        .exitProcess(false);
    const help = async (cli: ReturnType<typeof build>): Promise<string> => {
      let said = '';
      await cli.parseAsync(['list'], {}, () => {});
      await cli.parseAsync(['list', '--help'], {}, (_e, _argv, output) => {
        said = output;
      });
      return said;
    };
    const plain = build();
    const skipping = build();
    expect(skipHelpCache(skipping)).toBe(true);
    const text = await help(skipping);
    expect(text).toContain('--json');
    expect(text).toBe(await help(plain));
  });
});
