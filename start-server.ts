// Starting a server from TypeScript (docs/library.md): the settings are those of the YAML config
// file, checked and defaulted exactly as `rest serve` checks a config file. The environment is not
// read: what the program passes is what runs.

import { checkSettings, type FileConfig } from './cli/config/config-file.js';
import { loadConfig } from './cli/config/load-config.js';
import { configError } from './cli/config/parse-values.js';
import { createLogger, type Logger } from './runtime/logger.js';
import { startServer as startOnConfig, type ServerHandle } from './runtime/server/server.js';

/** `addr`, `db: {url, rls, statement_timeout, pooler, listen_url}`, `auth: {enabled, secret, token_ttl, refresh_ttl}`, `http`, `cors`. */
export type ServerSettings = FileConfig;

export interface ServerOptions {
  /** Where the server logs (pino); default: JSON lines on stdout at level info. */
  readonly logger?: Logger;
}

export type { ServerHandle };

/**
 * Serves the REST API over `settings.db.url` (default `sqlite://./rest.db`) on `settings.addr`
 * (default `:3000`; `127.0.0.1:0` picks a free port, see `handle.url`). Resolves once listening;
 * `handle.close()` answers the requests already accepted, then closes the database pool.
 */
export async function startServer(
  settings: ServerSettings = {},
  options: ServerOptions = {},
): Promise<ServerHandle> {
  const config = loadConfig({
    flags: {},
    env: {},
    settings: checkSettings(settings, 'startServer settings'),
  });
  if ((config.workers ?? 1) > 1) {
    throw configError('startServer settings: workers runs several processes; use `rest serve -workers N`');
  }
  return startOnConfig(config, {
    logger: options.logger ?? createLogger(),
    // The console runs policy test files as `rest policy test` does, loaded when first asked.
    policyTests: async (source, name, o) =>
      (await import('./runtime/policy-test/run-file.js')).runPolicyTestFile(source, name, o),
  });
}
