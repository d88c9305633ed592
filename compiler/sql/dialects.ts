// Every dialect by name, for callers that choose by the database's kind.

import type { DialectName } from '../types.js';
import type { Dialect } from './dialect.js';
import { mysqlDialect } from './mysql-dialect.js';
import { postgresDialect } from './postgres-dialect.js';
import { sqliteDialect } from './sqlite-dialect.js';

export const dialects: Readonly<Record<DialectName, Dialect>> = Object.freeze({
  postgres: postgresDialect,
  mysql: mysqlDialect,
  sqlite: sqliteDialect,
});
