// Shared pieces of the CLI end-to-end tests: a test database per suite with an adapter to look
// at what the CLI wrote, and the tables the policy examples use.

import type { DialectName } from '../../../compiler/types.js';
import type { DbAdapter } from '../../../runtime/db/adapter.js';
import { createAdapter } from '../../../runtime/db/create-adapter.js';
import { createTestDatabase, skipReason, type TestDatabase } from '../../support/databases.js';
import { runCli, type CliResult, type RunOptions } from './run-cli.js';

export interface CliDatabase {
  readonly kind: DialectName;
  readonly db: TestDatabase;
  readonly adapter: DbAdapter;
  /** `rest -db.url <this database> …args` */
  rest(args: readonly string[], options?: RunOptions): Promise<CliResult>;
  count(table: string): Promise<number>;
  close(): Promise<void>;
}

export interface CliDatabaseOptions {
  /** Statements run first, on the new database (the tables a suite uses). */
  readonly ddl?: readonly string[];
  /** `rest auth setup` after the statements. */
  readonly authSetup?: boolean;
}

export async function openCliDatabase(
  kind: DialectName,
  options: CliDatabaseOptions = {},
): Promise<CliDatabase> {
  const db = await createTestDatabase(kind);
  const adapter = await createAdapter(db.url);
  const rest: CliDatabase['rest'] = (args, runOptions) => runCli(['-db.url', db.url, ...args], runOptions);
  try {
    for (const ddl of options.ddl ?? []) await adapter.exec(ddl);
    if (options.authSetup === true) {
      const setup = await rest(['auth', 'setup']);
      if (setup.code !== 0) throw new Error(`rest auth setup exited ${setup.code}: ${setup.stderr}`);
    }
  } catch (e) {
    await adapter.close();
    await db.drop();
    throw e;
  }
  return {
    kind,
    db,
    adapter,
    rest,
    async count(table) {
      const { rows } = await adapter.query({
        text: `SELECT count(*) AS n FROM ${adapter.dialect.quoteIdent(table)}`,
        values: [],
      });
      return Number(rows[0]?.['n']);
    },
    async close() {
      await adapter.close();
      await db.drop();
    },
  };
}

/** `todos` has the owner column of the default policy; `docs` lacks it. */
export const EXAMPLE_TABLES_DDL: readonly string[] = [
  'CREATE TABLE todos (id integer PRIMARY KEY, user_id integer, title varchar(100))',
  'CREATE TABLE docs (id integer PRIMARY KEY, title varchar(100))',
];

/** The name of a suite, with the reason when its database is not configured. */
export const suiteName = (what: string, kind: DialectName): string => {
  const reason = skipReason(kind);
  return reason === undefined ? `${what} on ${kind}` : `${what} on ${kind} (${reason})`;
};
