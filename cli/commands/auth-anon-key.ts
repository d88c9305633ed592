// `rest auth anon-key`: the API key of anonymous clients (supabase-js's anon key), signed with the
// configured secret.

import type { CommandModule } from 'yargs';
import type { GlobalArgs } from '../config/global-options.js';
import { lazyHandler, type CommandContext } from '../context.js';

export function authAnonKeyCommand(ctx: CommandContext): CommandModule<GlobalArgs, GlobalArgs> {
  return {
    command: 'anon-key',
    describe: 'Print the API key of anonymous clients: a JWT {"role":"anon"} signed with auth.secret',
    builder: (y) =>
      y.example(
        '$0 -auth.secret "$REST_AUTH_SECRET" auth anon-key',
        'The key to give createClient(url, key)',
      ),
    handler: lazyHandler(() => import('../handlers/auth-anon-key.js'), ctx),
  };
}
