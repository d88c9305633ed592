// PostgreSQL adapter on a pg Pool: type parsers for identical JSON, transactions that always
// leave the client clean, catalog introspection of current_schema() and a cheap schema version.

import pg from 'pg';
import { postgresDialect } from '../../compiler/sql/dialect.js';
import type { RenderedSql } from '../../compiler/sql/fragment.js';
import type { ColumnType } from '../../compiler/types.js';
import type { DbAdapter, DbSession, QueryResult, Row, SchemaSnapshot } from './adapter.js';
import {
  CONNECT_TIMEOUT_MS,
  DEFAULT_POOL_SIZE,
  errorFields,
  type AdapterOptions,
} from './adapter-options.js';
import { buildSnapshot, type IntrospectedColumn, type IntrospectedKeyPart } from './build-snapshot.js';
import { bindParam, decimalValue, integerValue, localTimestamp, utcTimestamp } from './db-values.js';
import { ADAPTER_CLOSED, CONNECTION_FAILED, adapterError, mapDbError } from './map-db-error.js';

// Text-format parsers by type OID (pg_type.oid; https://github.com/brianc/node-pg-types).
// pg's defaults turn int8/numeric into strings and dates into local-time Date objects.
const TEXT_PARSERS: ReadonlyMap<number, (text: string) => unknown> = new Map<
  number,
  (text: string) => unknown
>([
  [20, integerValue], // int8
  [1700, decimalValue], // numeric
  [1082, (text) => text], // date: keep YYYY-MM-DD
  [1114, localTimestamp], // timestamp without time zone
  [1184, utcTimestamp], // timestamp with time zone
  [1186, (text) => text], // interval: keep the database's text
]);

const types: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    (format ?? 'text') === 'text'
      ? (TEXT_PARSERS.get(oid) ?? pg.types.getTypeParser(oid, 'text'))
      : pg.types.getTypeParser(oid, 'binary')) as pg.CustomTypesConfig['getTypeParser'],
};

// Base type names (pg_type.typname) of domains and columns.
const COLUMN_TYPES: Readonly<Record<string, ColumnType>> = {
  int2: 'integer',
  int4: 'integer',
  int8: 'integer',
  numeric: 'decimal',
  float4: 'decimal',
  float8: 'decimal',
  bool: 'boolean',
  text: 'text',
  varchar: 'text',
  bpchar: 'text',
  name: 'text',
  citext: 'text',
};

const columnType = (baseType: string): ColumnType => COLUMN_TYPES[baseType] ?? 'other';

const INTROSPECT_COLUMNS = `
SELECT c.relname AS table_name, a.attname AS column_name,
       format_type(a.atttypid, a.atttypmod) AS db_type,
       coalesce(bt.typname, t.typname) AS base_type,
       NOT a.attnotnull AS nullable,
       (a.atthasdef OR a.attidentity <> '' OR a.attgenerated <> '') AS has_default,
       (a.attidentity <> '' OR coalesce(pg_get_expr(d.adbin, d.adrelid) LIKE 'nextval(%', false)) AS auto_increment
FROM pg_class c
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
JOIN pg_type t ON t.oid = a.atttypid
LEFT JOIN pg_type bt ON t.typtype = 'd' AND bt.oid = t.typbasetype
LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')
ORDER BY c.relname, a.attnum`;

const INTROSPECT_KEYS = `
SELECT c.relname AS table_name, a.attname AS column_name
FROM pg_index i
JOIN pg_class c ON c.oid = i.indrelid
CROSS JOIN LATERAL unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
WHERE i.indisprimary AND c.relnamespace = current_schema()::regnamespace
ORDER BY c.relname, k.ord`;

// Every DDL statement writes a new version of the catalog rows it changes, so the row versions
// (xmin) of the schema's tables, columns, defaults and primary keys change with any of them.
const SCHEMA_VERSION = `
WITH rel AS (
  SELECT oid, xmin FROM pg_class
  WHERE relnamespace = current_schema()::regnamespace AND relkind IN ('r', 'p')
)
SELECT md5(coalesce(string_agg(x, ',' ORDER BY x), '')) AS version FROM (
  SELECT 'c' || oid || ':' || xmin::text AS x FROM rel
  UNION ALL
  SELECT 'a' || a.attrelid || ':' || a.attnum || ':' || a.xmin::text FROM pg_attribute a JOIN rel ON rel.oid = a.attrelid WHERE a.attnum > 0
  UNION ALL
  SELECT 'd' || d.oid || ':' || d.xmin::text FROM pg_attrdef d JOIN rel ON rel.oid = d.adrelid
  UNION ALL
  SELECT 'i' || i.indexrelid || ':' || i.xmin::text FROM pg_index i JOIN rel ON rel.oid = i.indrelid WHERE i.indisprimary
) s`;

const toResult = (r: pg.QueryResult): QueryResult => ({
  rows: r.rows as Row[],
  rowCount: r.command === 'SELECT' || r.rowCount === null ? r.rows.length : r.rowCount,
});

// pg reports server errors as DatabaseError (with a SQLSTATE) and network errors with a node
// code; what is left ("Connection terminated unexpectedly", connect timeouts) is a lost connection.
export function mapPgError(e: unknown): Error {
  const hasCode = typeof (e as { code?: unknown } | null)?.code === 'string';
  return mapDbError(e instanceof pg.DatabaseError || hasCode ? e : adapterError(CONNECTION_FAILED, e));
}

async function run(client: pg.Pool | pg.PoolClient, sql: RenderedSql): Promise<QueryResult> {
  try {
    return toResult(await client.query({ text: sql.text, values: sql.values.map(bindParam) }));
  } catch (e) {
    throw mapPgError(e);
  }
}

class PgAdapter implements DbAdapter {
  readonly kind = 'postgres' as const;
  readonly dialect = postgresDialect;
  readonly #pool: pg.Pool;
  #closed = false;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  #ensureOpen(): void {
    if (this.#closed) throw mapDbError(adapterError(ADAPTER_CLOSED));
  }

  async query(sql: RenderedSql): Promise<QueryResult> {
    this.#ensureOpen();
    return await run(this.#pool, sql);
  }

  async transaction<T>(fn: (tx: DbSession) => Promise<T>): Promise<T> {
    this.#ensureOpen();
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (e) {
      throw mapPgError(e);
    }
    // pg-pool removes its error listener from a checked-out client, and an `error` event without
    // a listener (the socket of a killed backend) would crash the process. A client that failed,
    // or whose ROLLBACK failed and may still be inside a transaction, is destroyed, never reused.
    let broken: Error | undefined;
    const onError = (e: Error): void => {
      broken = e;
    };
    client.on('error', onError);
    try {
      await run(client, { text: 'BEGIN', values: [] });
      const result = await fn({ query: (sql) => run(client, sql) });
      await run(client, { text: 'COMMIT', values: [] });
      return result;
    } catch (e) {
      if (broken === undefined) {
        try {
          await client.query('ROLLBACK');
        } catch (rollbackError) {
          broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
        }
      }
      // Driver errors were mapped by run(); the caller's own errors pass through unchanged.
      throw e;
    } finally {
      client.release(broken);
      client.removeListener('error', onError);
    }
  }

  async exec(sqlText: string): Promise<void> {
    this.#ensureOpen();
    try {
      await this.#pool.query(sqlText);
    } catch (e) {
      throw mapPgError(e);
    }
  }

  async introspect(): Promise<SchemaSnapshot> {
    const [columns, keys] = await Promise.all([
      this.query({ text: INTROSPECT_COLUMNS, values: [] }),
      this.query({ text: INTROSPECT_KEYS, values: [] }),
    ]);
    return buildSnapshot(
      columns.rows.map((r): IntrospectedColumn => ({
        table: String(r['table_name']),
        name: String(r['column_name']),
        type: columnType(String(r['base_type'])),
        dbType: String(r['db_type']).toLowerCase(),
        nullable: r['nullable'] === true,
        hasDefault: r['has_default'] === true,
        autoIncrement: r['auto_increment'] === true,
      })),
      keys.rows.map((r): IntrospectedKeyPart => ({
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
    await this.#pool.end();
  }
}

/** The pool of each PostgreSQL adapter, for the native-RLS request runner (runtime/rls/). */
const pools = new WeakMap<DbAdapter, pg.Pool>();

/** The pg Pool behind a PostgreSQL adapter (its clients are pipelined); undefined for other adapters. */
export const pgPoolOf = (adapter: DbAdapter): pg.Pool | undefined => pools.get(adapter);

/** Opens a pool and checks one connection; throws the driver's error when that fails. */
export async function createPgAdapter(
  connectionString: string,
  options: AdapterOptions = {},
): Promise<DbAdapter> {
  const pool = new pg.Pool({
    connectionString,
    max: options.poolSize ?? DEFAULT_POOL_SIZE,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    keepAlive: true,
    application_name: 'rest',
    types,
    // Pipeline mode (pg >= 8.23) writes a query without waiting for the previous answer; one
    // query at a time behaves as before, and the native-RLS runner sends a request's BEGIN,
    // settings, statement and COMMIT in one round trip.
    pipeline: true,
  });
  // An idle client whose server went away emits `error` on the pool; without a listener that
  // would crash the process. pg-pool drops the client, and the next checkout connects anew.
  pool.on('error', (e) => options.logger?.warn(errorFields(e), 'idle PostgreSQL connection failed'));
  try {
    await pool.query('SELECT 1');
  } catch (e) {
    await pool.end().catch(() => undefined);
    throw e;
  }
  const adapter = new PgAdapter(pool);
  pools.set(adapter, pool);
  return adapter;
}
