// The one small interface every database adapter implements (pg, mysql2, better-sqlite3).
// Statements arrive rendered (text + bound values); adapters never build SQL from values.

import type { Dialect } from '../../compiler/sql/dialect.js';
import type { RenderedSql } from '../../compiler/sql/fragment.js';
import type { ValueKind } from './value-kind.js';
import type { ColumnType, DialectName } from '../../compiler/types.js';

export type Row = Readonly<Record<string, unknown>>;

export interface QueryResult {
  readonly rows: readonly Row[];
  /** Rows returned, or rows affected for INSERT/UPDATE/DELETE without RETURNING. */
  readonly rowCount: number;
  /** Auto-increment id of the last insert, where the database reports one (MySQL, SQLite). */
  readonly insertId?: number;
}

/**
 * A statement as an adapter runs it. `typedAs`: result columns that carry a table column's values
 * through an expression (a masked column, `CASE WHEN … THEN c END AS c`), by name. A database
 * types an expression's result by its value alone (SQLite gives it no declared type; MariaDB
 * keeps no JSON or boolean mark on it), so the adapter reads such a column as the table column reads.
 */
export interface Statement extends RenderedSql {
  readonly typedAs?: ReadonlyMap<string, ColumnInfo>;
}

export interface DbSession {
  query(sql: Statement): Promise<QueryResult>;
}

export interface ColumnInfo {
  readonly name: string;
  /** What values of this column are compared and returned as. */
  readonly type: ColumnType;
  /** The database's own type name, lower case (e.g. `integer`, `varchar(32)`, `jsonb`). */
  readonly dbType: string;
  readonly nullable: boolean;
  readonly hasDefault: boolean;
  /** Filled by the database (serial/identity/auto_increment/rowid alias). */
  readonly autoIncrement: boolean;
  /** What its values are validated and bound as (value-kind.ts), derived once with the snapshot. */
  readonly valueKind: ValueKind;
}

export interface TableInfo {
  readonly name: string;
  readonly columns: readonly ColumnInfo[];
  readonly columnsByName: ReadonlyMap<string, ColumnInfo>;
  readonly primaryKey: readonly string[];
}

export interface SchemaSnapshot {
  readonly tables: ReadonlyMap<string, TableInfo>;
  /**
   * Tables the database holds that are not served, each with the sentence that says why: a
   * partition or an inheritance child (reached only through its parent, PostgreSQL), the record of
   * rest's own migrations. They are not in `tables`: addressing one is 404, naming one in a policy 400.
   */
  readonly unserved?: ReadonlyMap<string, string>;
}

/**
 * How a request's statements run: `single` — exactly one statement, its own transaction;
 * `transaction` — every statement in one transaction (COMMIT on resolve, ROLLBACK on throw).
 */
export type RunMode = 'single' | 'transaction';

/** Which writes can hand back the rows they stored in the same statement (`… RETURNING`). */
export interface Returning {
  readonly insert: boolean;
  readonly update: boolean;
  readonly delete: boolean;
}

/** What a request's statements carry to the adapter besides their SQL. */
export interface RunOptions {
  /**
   * Aborted when the request's client has gone away: a request still waiting for a connection is
   * dropped (503 `client_gone`, never sent), and its running statement is cancelled (PostgreSQL,
   * MariaDB; SQLite runs a statement to its end, see docs/operations.md).
   */
  readonly signal?: AbortSignal | undefined;
}

export interface DbAdapter extends DbSession {
  readonly kind: DialectName;
  readonly dialect: Dialect;
  /** PostgreSQL and SQLite (≥ 3.35): all three; MariaDB ≥ 10.5: INSERT and DELETE; MySQL: none. */
  readonly returning: Returning;
  /** One statement, its own transaction; `options.signal` as in RunOptions. */
  query(sql: Statement, options?: RunOptions): Promise<QueryResult>;
  /** Runs `fn` in one transaction: COMMIT when it resolves, ROLLBACK when it throws. */
  transaction<T>(fn: (tx: DbSession) => Promise<T>, options?: RunOptions): Promise<T>;
  /** Trusted, parameterless SQL (DDL of setup and migrations); never request data. */
  exec(sqlText: string): Promise<void>;
  /** Tables of the current database/schema with columns and primary keys. */
  introspect(): Promise<SchemaSnapshot>;
  /** A cheap value that changes whenever the schema changes (checked periodically). */
  schemaVersion(): Promise<string>;
  close(): Promise<void>;
}
