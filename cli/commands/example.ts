// `rest example`: creates the quick start's table `notes`, so that a first run ends with a row one
// user can read and another cannot.

import type { CommandModule } from 'yargs';
import type { GlobalArgs } from '../config/global-options.js';
import { lazyHandler, type CommandContext } from '../context.js';
import type { ExampleArgs } from '../handlers/example.js';

export function exampleCommand(ctx: CommandContext): CommandModule<GlobalArgs, ExampleArgs> {
  return {
    command: 'example',
    describe: 'Create the example table notes (id, user_id, body) of the quick start',
    builder: (y) =>
      y.example(
        '$0 example',
        'Create notes in ./rest.db; with the default policies each user sees only their own',
      ),
    handler: lazyHandler(() => import('../handlers/example.js'), ctx),
  };
}
