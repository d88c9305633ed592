// Opens the adapter for a `-db.url` (docs/operations.md): a bad URL is a usage error, an unreachable
// database one clear sentence with category `unavailable`.

import { RestError } from '../../errors/rest-error.js';
import type { DbAdapter } from './adapter.js';
import type { AdapterOptions } from './adapter-options.js';
import { describeConnectionFailure } from './map-db-error.js';
import { parseDbUrl, type DbUrl } from './parse-db-url.js';

export { parseDbUrl, type DbUrl } from './parse-db-url.js';
export type { AdapterOptions, DbLogger } from './adapter-options.js';

const LABEL: Readonly<Record<DbUrl['kind'], string>> = {
  postgres: 'PostgreSQL',
  mysql: 'MySQL/MariaDB',
  sqlite: 'SQLite',
};

// Each adapter (and its driver) is loaded only for its own kind of URL: a server holds one driver
// in memory, not three.
async function open(url: string, parsed: DbUrl, options: AdapterOptions): Promise<DbAdapter> {
  switch (parsed.kind) {
    case 'postgres': {
      const { createPgAdapter } = await import('./postgres/pg-adapter.js');
      return createPgAdapter(url, options);
    }
    case 'mysql': {
      const { createMysqlAdapter } = await import('./mysql/mysql-adapter.js');
      const u = new URL(url);
      return createMysqlAdapter(
        {
          host: parsed.host,
          port: parsed.port,
          user: parsed.user || 'root',
          password: decodeURIComponent(u.password),
          database: parsed.database,
        },
        options,
      );
    }
    case 'sqlite': {
      const { createSqliteAdapter } = await import('./sqlite/sqlite-adapter.js');
      return createSqliteAdapter(parsed.path, options);
    }
  }
}

export async function createAdapter(url: string, options: AdapterOptions = {}): Promise<DbAdapter> {
  const parsed = parseDbUrl(url);
  try {
    return await open(url, parsed, options);
  } catch (e) {
    if (e instanceof RestError && e.code === 'transaction_pooler') {
      throw new RestError(
        'transaction_pooler',
        `The ${LABEL[parsed.kind]} database at ${parsed.display} ${e.message}`,
        {
          category: 'usage',
          cause: e,
        },
      );
    }
    throw new RestError(
      'database_unavailable',
      `Cannot connect to the ${LABEL[parsed.kind]} database at ${parsed.display}: ${describeConnectionFailure(e)}.`,
      { cause: e },
    );
  }
}
