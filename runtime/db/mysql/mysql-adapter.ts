// MySQL/MariaDB adapter on a mysql2/promise pool: server-side prepared statements with `?`
// placeholders (no multipleStatements for requests), UTC sessions, values converted per result
// field so JSON matches the other databases, information_schema introspection.

import mysql from 'mysql2/promise';
import { mysqlDialect } from '../../../compiler/sql/mysql-dialect.js';
import type { ColumnType } from '../../../compiler/types.js';
import type {
  DbAdapter,
  DbSession,
  QueryResult,
  Returning,
  Row,
  RunOptions,
  SchemaSnapshot,
  Statement,
} from '../adapter.js';
import {
  CONNECT_TIMEOUT_MS,
  DEFAULT_MAX_WAITING,
  DEFAULT_POOL_SIZE,
  errorFields,
  type AdapterOptions,
  type DbLogger,
} from '../adapter-options.js';
import { buildSnapshot, type IntrospectedColumn, type IntrospectedKeyPart } from '../build-snapshot.js';
import { bindParam, jsonValue, localTimestamp } from '../db-values.js';
import {
  adapterClosed,
  cancelWhenGone,
  clientGone,
  connectionFailure,
  isGone,
  overloaded,
  throwIfGone,
} from '../map-db-error.js';
import { mapMysqlError, mysqlErrors } from './mysql-errors.js';

export interface MysqlConnectionConfig {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly password: string;
  readonly database: string;
}

// Field types of the client/server protocol (https://mariadb.com/kb/en/result-set-packets/#field-types).
const FIELD = { TINY: 1, FLOAT: 4, TIMESTAMP: 7, DATETIME: 12, JSON: 245, BLOB: 252 } as const;
/** Character set number 63 marks binary strings (BLOB, VARBINARY). */
const BINARY_CHARSET = 63;

type Convert = (value: unknown) => unknown;

// The binary protocol sends FLOAT as 4 bytes that mysql2 widens to a double (1.1 → 1.100000023841858);
// the shortest decimal that reads back as the same float32 is what PostgreSQL and the text protocol show.
function float32Value(value: unknown): unknown {
  if (typeof value !== 'number' || !Number.isFinite(value)) return value;
  for (let digits = 1; digits <= 9; digits++) {
    const candidate = Number(value.toPrecision(digits));
    if (Math.fround(candidate) === Math.fround(value)) return candidate;
  }
  return value;
}

const booleanValue: Convert = (v) => (typeof v === 'number' ? v !== 0 : v);
const datetimeValue: Convert = (v) => (typeof v === 'string' ? localTimestamp(v) : v);
// Sessions run in UTC (see createMysqlAdapter), so TIMESTAMP values are UTC instants.
const timestampValue: Convert = (v) => (typeof v === 'string' ? `${localTimestamp(v)}Z` : v);

const INTEGER_TYPES = new Set(['tinyint', 'smallint', 'mediumint', 'int', 'integer', 'bigint']);
const DECIMAL_TYPES = new Set(['decimal', 'numeric', 'float', 'double', 'real']);
const TEXT_TYPES = new Set(['char', 'varchar', 'tinytext', 'text', 'mediumtext', 'longtext', 'enum', 'set']);

function columnType(dataType: string, columnTypeText: string, isJson: boolean): ColumnType {
  if (isJson) return 'other';
  // BOOL/BOOLEAN are synonyms of TINYINT(1) (https://mariadb.com/kb/en/boolean/).
  if (/^tinyint\(1\)/.test(columnTypeText)) return 'boolean';
  if (INTEGER_TYPES.has(dataType)) return 'integer';
  if (DECIMAL_TYPES.has(dataType)) return 'decimal';
  if (TEXT_TYPES.has(dataType)) return 'text';
  return 'other';
}

// MariaDB's JSON is an alias of LONGTEXT with a column CHECK (json_valid(`col`))
// (https://mariadb.com/kb/en/json-data-type/); MySQL has a real JSON type, which mysql2 parses.
// information_schema is read with one simple query per view and joined here: MariaDB evaluates
// joins and correlated subqueries over information_schema very slowly (hundreds of ms).
const JSON_CHECK = /^json_valid\(`((?:[^`]|``)+)`\)$/;

const INTROSPECT_COLUMNS = `
SELECT TABLE_NAME AS table_name, COLUMN_NAME AS column_name, DATA_TYPE AS data_type, COLUMN_TYPE AS column_type,
       IS_NULLABLE AS is_nullable, COLUMN_DEFAULT AS column_default, EXTRA AS extra
FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE()
ORDER BY TABLE_NAME, ORDINAL_POSITION`;

const BASE_TABLES = `
SELECT TABLE_NAME AS table_name FROM information_schema.TABLES
WHERE TABLE_SCHEMA = DATABASE() AND TABLE_TYPE = 'BASE TABLE'`;

const MARIADB_CHECKS = `
SELECT TABLE_NAME AS table_name, CHECK_CLAUSE AS check_clause FROM information_schema.CHECK_CONSTRAINTS
WHERE CONSTRAINT_SCHEMA = DATABASE() AND LEVEL = 'Column'`;

const MARIADB_TABLE_CHECKS = `${MARIADB_CHECKS} AND TABLE_NAME = ?`;

/** `table` → JSON columns, from MariaDB's column-level json_valid checks. */
function jsonChecks(rows: readonly Row[]): Map<string, Set<string>> {
  const json = new Map<string, Set<string>>();
  for (const r of rows) {
    const column = JSON_CHECK.exec(String(r['check_clause']))?.[1]?.replaceAll('``', '`');
    if (column === undefined) continue;
    const table = String(r['table_name']);
    json.set(table, (json.get(table) ?? new Set()).add(column));
  }
  return json;
}

const INTROSPECT_KEYS = `
SELECT TABLE_NAME AS table_name, COLUMN_NAME AS column_name
FROM information_schema.KEY_COLUMN_USAGE
WHERE TABLE_SCHEMA = DATABASE() AND CONSTRAINT_NAME = 'PRIMARY'
ORDER BY TABLE_NAME, ORDINAL_POSITION`;

// A checksum of every column definition of the database: any CREATE/ALTER/DROP/RENAME changes it.
const SCHEMA_VERSION = `
SELECT CONCAT(COUNT(*), ':', COALESCE(SUM(CRC32(CONCAT_WS('|', TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION,
       COLUMN_TYPE, IS_NULLABLE, COALESCE(COLUMN_DEFAULT, '~'), EXTRA, COLUMN_KEY))), 0)) AS version
FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE()`;

type Queryable = Pick<mysql.Pool, 'execute' | 'query'> | mysql.PoolConnection;

class MysqlAdapter implements DbAdapter {
  readonly kind = 'mysql' as const;
  readonly dialect = mysqlDialect;
  readonly #pool: mysql.Pool;
  readonly #config: mysql.PoolOptions;
  readonly #mariadb: boolean;
  readonly returning: Returning;
  /** JSON columns by table, learnt on first sight of a table and refreshed by introspect()/exec(). */
  #jsonColumns = new Map<string, Promise<ReadonlySet<string>>>();
  #closed = false;
  /** Requests waiting for a connection (with a signal), and their bound. */
  #waiting = 0;
  readonly #maxWaiting: number;
  readonly #logger: DbLogger | undefined;
  /** The connection that sends KILL QUERY, opened on first need. */
  #killer: Promise<mysql.Connection> | undefined;

  constructor(
    pool: mysql.Pool,
    config: mysql.PoolOptions,
    mariadb: boolean,
    returning: Returning,
    options: AdapterOptions,
  ) {
    this.#maxWaiting = options.maxWaiting ?? DEFAULT_MAX_WAITING;
    this.#logger = options.logger;
    this.#pool = pool;
    this.#config = config;
    this.#mariadb = mariadb;
    this.returning = returning;
  }

  #ensureOpen(): void {
    if (this.#closed) throw adapterClosed();
  }

  #jsonColumnsOf(table: string, via: Queryable): Promise<ReadonlySet<string>> {
    let found = this.#jsonColumns.get(table);
    if (found === undefined) {
      found = via
        .execute<mysql.RowDataPacket[]>(MARIADB_TABLE_CHECKS, [table])
        .then(([rows]) => jsonChecks(rows).get(table) ?? new Set<string>());
      found.catch(() => this.#jsonColumns.delete(table));
      this.#jsonColumns.set(table, found);
    }
    return found;
  }

  /**
   * How each result column converts. A boolean is TINYINT(1); JSON is MySQL's JSON type or a
   * MariaDB column with a json_valid check, parsed from its text once. An expression that carries
   * a column (a masked column: a wider TINYINT, a LONGTEXT) converts as the statement's `typedAs` says.
   */
  async #converters(
    fields: readonly mysql.FieldPacket[],
    via: Queryable,
    typedAs: Statement['typedAs'],
  ): Promise<(readonly [string, Convert])[]> {
    const converters: (readonly [string, Convert])[] = [];
    for (const f of fields) {
      const type = f.columnType ?? f.type;
      const carried = f.orgName ? undefined : typedAs?.get(f.name);
      if (type === FIELD.TINY && (f.columnLength === 1 || carried?.type === 'boolean'))
        converters.push([f.name, booleanValue]);
      else if (type === FIELD.FLOAT) converters.push([f.name, float32Value]);
      else if (type === FIELD.DATETIME) converters.push([f.name, datetimeValue]);
      else if (type === FIELD.TIMESTAMP) converters.push([f.name, timestampValue]);
      else if (type === FIELD.JSON || carried?.dbType === 'json') converters.push([f.name, jsonValue]);
      else if (
        this.#mariadb &&
        type === FIELD.BLOB &&
        f.characterSet !== BINARY_CHARSET &&
        f.orgTable &&
        f.orgName
      ) {
        if ((await this.#jsonColumnsOf(f.orgTable, via)).has(f.orgName)) converters.push([f.name, jsonValue]);
      }
    }
    return converters;
  }

  async #run(via: Queryable, sql: Statement): Promise<QueryResult> {
    try {
      const [result, fields] = await via.execute(
        sql.text,
        sql.values.map(bindParam) as mysql.ExecuteValues[],
      );
      if (!Array.isArray(result)) {
        const header = result as mysql.ResultSetHeader;
        return header.insertId > 0
          ? { rows: [], rowCount: header.affectedRows, insertId: header.insertId }
          : { rows: [], rowCount: header.affectedRows };
      }
      const rows = result as Record<string, unknown>[];
      const converters = rows.length === 0 ? [] : await this.#converters(fields, via, sql.typedAs);
      for (const row of rows) for (const [name, convert] of converters) row[name] = convert(row[name]);
      return { rows: rows as Row[], rowCount: rows.length };
    } catch (e) {
      throw mapMysqlError(e);
    }
  }

  async query(sql: Statement, options?: RunOptions): Promise<QueryResult> {
    this.#ensureOpen();
    const signal = options?.signal;
    if (signal === undefined) return await this.#run(this.#pool, sql);
    return this.#withConnection(signal, (connection) => this.#run(connection, sql));
  }

  /**
   * Runs `fn` on a connection of its own. With a request's `signal`: the request waits behind at
   * most #maxWaiting others (else 503 `overloaded`), is dropped if its client goes away before it
   * has a connection, and a statement running when the client goes is ended by KILL QUERY from
   * another connection; that connection is then destroyed, never reused (the kill may still be
   * pending on it). `fn` marks a connection `broken` to have it destroyed too.
   */
  async #withConnection<T>(
    signal: AbortSignal | undefined,
    fn: (connection: mysql.PoolConnection, broken: () => void) => Promise<T>,
  ): Promise<T> {
    throwIfGone(signal);
    let connection: mysql.PoolConnection;
    if (signal === undefined) {
      try {
        connection = await this.#pool.getConnection();
      } catch (e) {
        throw mapMysqlError(e);
      }
    } else {
      if (this.#waiting >= this.#maxWaiting) throw overloaded();
      // A waiter whose client went away no longer counts against the bound.
      let counted = true;
      const uncount = (): void => {
        if (counted) this.#waiting -= 1;
        counted = false;
      };
      this.#waiting += 1;
      signal.addEventListener('abort', uncount, { once: true });
      try {
        connection = await this.#pool.getConnection();
      } catch (e) {
        throw mapMysqlError(e);
      } finally {
        signal.removeEventListener('abort', uncount);
        uncount();
      }
      if (isGone(signal)) {
        connection.release();
        throw clientGone();
      }
    }
    let destroy = false;
    let settled = false;
    const killing = cancelWhenGone(
      signal,
      () => {
        destroy = true;
        return this.#killQuery(connection.threadId);
      },
      () => settled,
    );
    try {
      return await fn(connection, () => (destroy = true));
    } catch (e) {
      throw isGone(signal) ? clientGone(e) : e;
    } finally {
      settled = true;
      await killing.done();
      if (destroy) connection.destroy();
      else connection.release();
    }
  }

  /** KILL QUERY on the killer connection (opened once, outside the pool, so a full pool cannot hold it up). */
  async #killQuery(threadId: number): Promise<void> {
    try {
      this.#killer ??= mysql.createConnection(this.#config);
      const killer = await this.#killer;
      await killer.query(`KILL QUERY ${Math.trunc(threadId)}`);
    } catch (e) {
      const failed = this.#killer;
      this.#killer = undefined;
      void failed?.then((c) => c.end()).catch(() => undefined);
      this.#logger?.warn(errorFields(e), 'a statement of a client that went away could not be killed');
    }
  }

  async transaction<T>(fn: (tx: DbSession) => Promise<T>, options?: RunOptions): Promise<T> {
    this.#ensureOpen();
    const signal = options?.signal;
    return this.#withConnection(signal, async (connection, broken) => {
      const run = (sql: Statement): Promise<QueryResult> => {
        // A client gone mid-transaction: nothing more is sent, and the transaction rolls back.
        throwIfGone(signal);
        return this.#run(connection, sql);
      };
      try {
        await this.#run(connection, { text: 'START TRANSACTION', values: [] });
        const result = await fn({ query: run });
        await run({ text: 'COMMIT', values: [] });
        return result;
      } catch (e) {
        // A connection whose ROLLBACK failed may still hold a transaction: destroy it, never reuse it.
        try {
          await connection.query('ROLLBACK');
        } catch {
          broken();
        }
        // Driver errors were mapped by #run(); the caller's own errors pass through unchanged.
        throw e;
      }
    });
  }

  /** Trusted DDL may hold several statements: it runs on its own short-lived connection. */
  async exec(sqlText: string): Promise<void> {
    this.#ensureOpen();
    try {
      const connection = await mysql.createConnection({ ...this.#config, multipleStatements: true });
      try {
        await connection.query(sqlText);
      } finally {
        await connection.end();
      }
    } catch (e) {
      throw mapMysqlError(e);
    } finally {
      this.#jsonColumns = new Map();
    }
  }

  async introspect(): Promise<SchemaSnapshot> {
    const none = Promise.resolve({ rows: [], rowCount: 0 });
    const [columns, tables, keys, checks] = await Promise.all([
      this.query({ text: INTROSPECT_COLUMNS, values: [] }),
      this.query({ text: BASE_TABLES, values: [] }),
      this.query({ text: INTROSPECT_KEYS, values: [] }),
      this.#mariadb ? this.query({ text: MARIADB_CHECKS, values: [] }) : none,
    ]);
    const baseTables = new Set(tables.rows.map((r) => String(r['table_name'])));
    const mariadbJson = jsonChecks(checks.rows);
    const introspected = columns.rows
      .filter((r) => baseTables.has(String(r['table_name'])))
      .map((r): IntrospectedColumn => {
        const table = String(r['table_name']);
        const name = String(r['column_name']);
        const dataType = String(r['data_type']).toLowerCase();
        const isJson = dataType === 'json' || mariadbJson.get(table)?.has(name) === true;
        const extra = String(r['extra'] ?? '').toLowerCase();
        const columnDefault = r['column_default'];
        const dbType = isJson ? 'json' : String(r['column_type']).toLowerCase();
        return {
          table,
          name,
          type: columnType(dataType, dbType, isJson),
          dbType,
          nullable: r['is_nullable'] === 'YES',
          // MariaDB shows "no default" as SQL NULL and DEFAULT NULL as the text NULL
          // (https://mariadb.com/kb/en/information-schema-columns-table/).
          hasDefault:
            (columnDefault !== null && columnDefault !== 'NULL') || /auto_increment|generated/.test(extra),
          autoIncrement: extra.includes('auto_increment'),
        };
      });
    this.#jsonColumns = new Map(
      [...baseTables].map((table) => [table, Promise.resolve(mariadbJson.get(table) ?? new Set<string>())]),
    );
    return buildSnapshot(
      introspected,
      keys.rows
        .filter((r) => baseTables.has(String(r['table_name'])))
        .map((r): IntrospectedKeyPart => ({
          table: String(r['table_name']),
          column: String(r['column_name']),
        })),
    );
  }

  async schemaVersion(): Promise<string> {
    const r = await this.query({ text: SCHEMA_VERSION, values: [] });
    return String(r.rows[0]?.['version']);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const killer = this.#killer;
    this.#killer = undefined;
    await killer?.then((c) => c.end()).catch(() => undefined);
    await this.#pool.end();
  }
}

/**
 * `, max_statement_time = <seconds>` for MariaDB's session SET, inside a MariaDB-only executable
 * comment (`/*M!` ≥ 10.1.1, https://mariadb.com/kb/en/comment-syntax/): a statement running longer
 * fails with 1969 (https://mariadb.com/kb/en/aborting-statements/). MySQL skips the comment: its
 * max_execution_time covers only SELECT, and its `/*!` comments would run on MariaDB too.
 */
function statementTimeoutSetting(ms: number): string {
  return ms > 0 ? ` /*M!100101 , max_statement_time = ${ms / 1000} */` : '';
}

/** Opens a pool and checks one connection; when that fails, throws OPEN_FAILED saying why. */
export async function createMysqlAdapter(
  config: MysqlConnectionConfig,
  options: AdapterOptions = {},
): Promise<DbAdapter> {
  const poolConfig: mysql.PoolOptions = {
    host: config.host,
    port: config.port,
    user: config.user,
    password: config.password,
    database: config.database,
    connectionLimit: options.poolSize ?? DEFAULT_POOL_SIZE,
    connectTimeout: CONNECT_TIMEOUT_MS,
    enableKeepAlive: true,
    multipleStatements: false,
    supportBigNumbers: true,
    bigNumberStrings: false,
    decimalNumbers: true,
    dateStrings: true,
    // JSON comes as its text and is parsed once here (#converters): MySQL's JSON type, and MariaDB's
    // JSON columns (LONGTEXT with a json_valid check) whether or not the server marks them.
    jsonStrings: true,
    // Each connection keeps its prepared statements; bound the cache so many distinct
    // statements stay under the server's max_prepared_stmt_count.
    maxPreparedStatements: 256,
  };
  const pool = mysql.createPool(poolConfig);
  // UTC sessions make TIMESTAMP values UTC instants; strict mode turns silent truncation into
  // errors as on PostgreSQL (https://mariadb.com/kb/en/sql-mode/#strict-mode).
  const session =
    "SET time_zone = '+00:00', sql_mode = CONCAT_WS(',', NULLIF(@@SESSION.sql_mode, ''), 'STRICT_ALL_TABLES')";
  pool.pool.on('connection', (connection) => {
    connection.query(session + statementTimeoutSetting(options.statementTimeoutMs ?? 0), (e: unknown) => {
      if (e) options.logger?.warn(errorFields(e), 'MySQL session setup failed');
    });
    // An idle connection whose server went away emits `error`; the pool drops it and connects anew.
    connection.on('error', (e: unknown) =>
      options.logger?.warn(errorFields(e), 'idle MySQL connection failed'),
    );
  });
  try {
    const [rows] = await pool.query<mysql.RowDataPacket[]>('SELECT VERSION() AS version');
    const version = String(rows[0]?.['version'] ?? '');
    const mariadb = version.toLowerCase().includes('mariadb');
    // INSERT … RETURNING since MariaDB 10.5 (https://mariadb.com/kb/en/insertreturning/); MySQL
    // has none, and neither has UPDATE … RETURNING; DELETE … RETURNING since MariaDB 10.0.5
    // (https://mariadb.com/kb/en/deletereturning/).
    const [major = 0, minor = 0] = version.split(/[.-]/).map(Number);
    const insert = mariadb && (major > 10 || (major === 10 && minor >= 5)) && options.returning !== false;
    return new MysqlAdapter(pool, poolConfig, mariadb, { insert, update: false, delete: insert }, options);
  } catch (e) {
    await pool.end().catch(() => undefined);
    throw connectionFailure(mysqlErrors, e);
  }
}
