// What every command handler is given: the resolved configuration and where to print; the one
// way commands open (and always close) the configured database; the arguments several share.

import { ACTIONS, type Action } from '../../compiler/types.js';
import { quoteValue } from '../../errors/quote-value.js';
import { RestError } from '../../errors/rest-error.js';
import type { DbAdapter, SchemaSnapshot, TableInfo } from '../../runtime/db/adapter.js';
import { createAdapter } from '../../runtime/db/create-adapter.js';
import {
  AUTH_POLICIES_TABLE,
  AUTH_USERS_TABLE,
  LOGIN_THROTTLE_TABLE,
  SESSIONS_TABLE,
} from '../../runtime/auth/auth-ddl.js';
import { upgradeAuthTables } from '../../runtime/auth/setup.js';
import type { Config } from '../../runtime/config.js';
import type { GlobalArgs } from '../config/global-options.js';
import { loadConfig, type Env } from '../config/load-config.js';
import { processTerminal, type Terminal } from './password-prompt.js';

export interface CommandIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

export interface CommandContext {
  /** The configuration of SPEC §1 (flag > env > file > default) for this invocation's flags. */
  readonly config: (flags: GlobalArgs) => Config;
  /** The environment, for the settings outside Config (`serve`'s log level, shutdown grace). */
  readonly env: Env;
  readonly io: CommandIo;
  /** Where a command asks for what is not given on the command line (a password). */
  readonly terminal: Terminal;
}

export const processIo: CommandIo = {
  stdout: (text) => void process.stdout.write(text),
  stderr: (text) => void process.stderr.write(text),
};

/** A context over the given environment and output (cli/main.ts; tests run the CLI in-process). */
export function commandContext(
  env: Env,
  io: CommandIo,
  terminal: Terminal = processTerminal,
): CommandContext {
  return { config: (flags) => loadConfig({ flags, env }), env, io, terminal };
}

/** The real process: its environment, standard output and error. */
export const processContext: CommandContext = commandContext(process.env, processIo);

/** Runs `fn` with an adapter for `config.db.url`, closing it whatever happens. */
export async function withDatabase<T>(config: Config, fn: (adapter: DbAdapter) => Promise<T>): Promise<T> {
  const adapter = await createAdapter(config.db.url);
  try {
    return await fn(adapter);
  } finally {
    await adapter.close();
  }
}

/** The auth commands need `auth setup` to have run; say so instead of failing on a missing table. */
export function requireAuthTables(schema: SchemaSnapshot): void {
  if (!schema.tables.has(AUTH_USERS_TABLE) || !schema.tables.has(AUTH_POLICIES_TABLE)) {
    throw new RestError(
      'conflict',
      'not_setup',
      'auth is not set up on this database: run `rest auth setup` first',
    );
  }
}

/**
 * Runs `fn` on a database where auth is set up, for the commands that touch accounts: a database
 * set up by an older version gains the tables added since (sessions, login throttle) first, as it
 * does when a server starts.
 */
export async function withAuthDatabase<T>(
  config: Config,
  fn: (adapter: DbAdapter) => Promise<T>,
): Promise<T> {
  return withDatabase(config, async (adapter) => {
    const schema = await adapter.introspect();
    requireAuthTables(schema);
    if (!schema.tables.has(SESSIONS_TABLE) || !schema.tables.has(LOGIN_THROTTLE_TABLE)) {
      await upgradeAuthTables(adapter, { dbUrl: config.db.url });
    }
    return fn(adapter);
  });
}

/** A table of the introspected schema, by name (unknown → exit 2). */
export function findTable(tables: ReadonlyMap<string, TableInfo>, name: string): TableInfo {
  const table = tables.get(name);
  if (table === undefined)
    throw new RestError('not_found', 'unknown_table', `table ${quoteValue(name)} does not exist`);
  return table;
}

/** A request's action (not the policy action `all`: a request has one). */
export function parseAction(text: string): Action {
  const action = ACTIONS.find((a) => a === text);
  if (action === undefined) {
    throw new RestError(
      'invalid_input',
      'invalid_action',
      `action ${quoteValue(text)} is not one of ${ACTIONS.join(', ')}`,
    );
  }
  return action;
}
