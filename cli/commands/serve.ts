// `rest [flags]` / `rest serve [flags]`: runs the HTTP server until SIGTERM or SIGINT, then
// shuts down gracefully (every accepted request is answered, the pool closes) and exits 0.

import type { CommandModule } from 'yargs';
import type { GlobalArgs } from '../config/global-options.js';
import { lazyHandler, type CommandContext } from '../context.js';

/** Signals are the real process's (SIGTERM/SIGINT stop the server); settings and logs go through `ctx`. */
export function serveCommand(ctx: CommandContext): CommandModule<GlobalArgs, GlobalArgs> {
  return {
    command: ['serve', '$0'],
    describe: 'run the HTTP server (the default command)',
    builder: (y) =>
      y.example('$0 serve -db.url sqlite://./rest.db -addr :8080', 'serve a SQLite file on port 8080'),
    handler: lazyHandler(() => import('../handlers/serve.js'), ctx),
  };
}
