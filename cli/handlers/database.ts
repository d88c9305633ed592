// What the command handlers share: the configuration for this invocation's flags, the one way
// they open (and always close) the configured database, and the checks several make.

import { ACTIONS, type Action } from '../../compiler/types.js';
import { quoteValue } from '../../errors/quote-value.js';
import { RestError } from '../../errors/rest-error.js';
import type { DbAdapter, SchemaSnapshot, TableInfo } from '../../runtime/db/adapter.js';
import { createAdapter } from '../../runtime/db/create-adapter.js';
import {
  AUTH_POLICIES_TABLE,
  AUTH_USERS_TABLE,
  INTERNAL_TABLES,
  missingAuthParts,
} from '../../runtime/auth/auth-ddl.js';
import type { Config } from '../../runtime/config.js';
import type { GlobalArgs } from '../config/global-options.js';
import { loadConfig } from '../config/load-config.js';
import type { CommandContext } from '../context.js';

/** The configuration of docs/cli.md (flag > env > file > default) for this invocation's flags. */
export const configOf = (ctx: CommandContext, flags: GlobalArgs): Config =>
  loadConfig({ flags, env: ctx.env });

/** Runs `fn` with an adapter for `config.db.url`, closing it whatever happens. */
export async function withDatabase<T>(config: Config, fn: (adapter: DbAdapter) => Promise<T>): Promise<T> {
  const adapter = await createAdapter(
    config.db.url,
    config.db.pooler === undefined ? {} : { pooler: config.db.pooler },
  );
  try {
    return await fn(adapter);
  } finally {
    await adapter.close();
  }
}

/** The auth commands need `auth setup` to have run; say so instead of failing on a missing table. */
export function requireAuthTables(schema: SchemaSnapshot): void {
  if (!schema.tables.has(AUTH_USERS_TABLE) || !schema.tables.has(AUTH_POLICIES_TABLE)) {
    throw new RestError('not_setup', 'auth is not set up on this database: run `rest auth setup` first');
  }
}

/**
 * Runs `fn` on a database where auth is set up, for the commands that touch accounts: a database
 * set up by an older version gains what was added since (sessions, login throttle, policy columns) first, as it
 * does when a server starts.
 */
export async function withAuthDatabase<T>(
  config: Config,
  fn: (adapter: DbAdapter) => Promise<T>,
): Promise<T> {
  return withDatabase(config, async (adapter) => {
    const schema = await adapter.introspect();
    requireAuthTables(schema);
    if (missingAuthParts(schema).length > 0) {
      // Loaded only here: setup brings bcrypt, which the commands that only read do not need.
      const { migrationUrlOf, upgradeAuthTables } = await import('../../runtime/auth/setup.js');
      await upgradeAuthTables(adapter, { dbUrl: migrationUrlOf(config) });
    }
    return fn(adapter);
  });
}

/**
 * A served table of the introspected schema, by name (unknown → exit 2): a partition, an
 * inheritance child or one of the server's own tables is refused, saying why.
 */
export function findTable(schema: SchemaSnapshot, name: string): TableInfo {
  const table = INTERNAL_TABLES.has(name) ? undefined : schema.tables.get(name);
  if (table !== undefined) return table;
  const why = INTERNAL_TABLES.has(name)
    ? `table ${quoteValue(name)} is internal to rest and is not served`
    : schema.unserved?.get(name);
  throw new RestError('unknown_table', why ?? `table ${quoteValue(name)} does not exist`);
}

/** A request's action (not the policy action `all`: a request has one). */
export function parseAction(text: string): Action {
  const action = ACTIONS.find((a) => a === text);
  if (action === undefined) {
    throw new RestError('invalid_action', `action ${quoteValue(text)} is not one of ${ACTIONS.join(', ')}`);
  }
  return action;
}
