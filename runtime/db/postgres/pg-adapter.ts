// PostgreSQL adapter on a pg Pool: type parsers for identical JSON, transactions that always
// leave the client clean, pipelined transactions (one round trip for a request's opening
// statements and its statement, with one Sync when that is all), catalog introspection of
// current_schema() and a cheap schema version. Work of one Sync (a single statement, a native-RLS
// request) runs on lanes that concurrent requests share (pg-lanes.ts); explicit transactions check
// out a client of their own (#withClient).

import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { postgresDialect } from '../../../compiler/sql/postgres-dialect.js';
import type { RenderedSql } from '../../../compiler/sql/fragment.js';
import type { ColumnType } from '../../../compiler/types.js';
import type {
  DbAdapter,
  DbSession,
  QueryResult,
  Returning,
  Row,
  RunMode,
  RunOptions,
  SchemaSnapshot,
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
import { decimalValue, integerValue, localTimestamp, utcTimestamp } from '../db-values.js';
import { RestError, internalError } from '../../../errors/rest-error.js';
import {
  adapterClosed,
  cancelWhenGone,
  clientGone,
  connectionFailure,
  isGone,
  overloaded,
  sqlStateOf,
  throwIfGone,
} from '../map-db-error.js';
import { cancelBackend } from './pg-cancel.js';
import { isConnectionFailure, mapPgError, pgErrors } from './pg-errors.js';
import { OneSync, type OneSyncOutcome } from './one-sync.js';
import { createLanes, LANE_DEPTH, laneCount, type Lanes } from './pg-lanes.js';
import { createPreparedStatements, type PreparedStatements } from './pg-prepared.js';

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

// Partitions and inheritance children (their pg_inherits row), each with its first parent: they
// are reached only through the parent, whose reads include their rows and whose policy applies.
const INTROSPECT_CHILDREN = `
SELECT c.relname AS table_name, p.relname AS parent_name, c.relispartition AS partition
FROM pg_inherits i
JOIN pg_class c ON c.oid = i.inhrelid
JOIN pg_class p ON p.oid = i.inhparent
WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p') AND i.inhseqno = 1`;

/**
 * postgres-migrations' record of the applied migrations of sql/ (runtime/auth/pg-migrations.ts),
 * known by its name and columns: the server's own bookkeeping, never served.
 */
const MIGRATIONS_TABLE = 'migrations';
const MIGRATIONS_COLUMNS = 'executed_at,hash,id,name';

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
  UNION ALL
  SELECT 'h' || h.inhrelid || ':' || h.inhparent || ':' || h.xmin::text FROM pg_inherits h JOIN rel ON rel.oid = h.inhrelid
) s`;

/** The tables of the schema that are not served, with why (SchemaSnapshot.unserved). */
function unservedTables(columns: readonly Row[], children: readonly Row[]): Map<string, string> {
  const unserved = new Map<string, string>();
  for (const r of children) {
    const parent = String(r['parent_name']);
    const how = r['partition'] === true ? 'a partition of' : 'an inheritance child of';
    unserved.set(
      String(r['table_name']),
      `table '${String(r['table_name'])}' is ${how} '${parent}': it is reached only through '${parent}'`,
    );
  }
  const migrations = columns
    .filter((r) => r['table_name'] === MIGRATIONS_TABLE)
    .map((r) => String(r['column_name']))
    .sort()
    .join(',');
  if (migrations === MIGRATIONS_COLUMNS) {
    unserved.set(MIGRATIONS_TABLE, `table '${MIGRATIONS_TABLE}' is the record of rest's own migrations`);
  }
  return unserved;
}

const toResult = (r: pg.QueryResult): QueryResult => ({
  rows: r.rows as Row[],
  rowCount: r.command === 'SELECT' || r.rowCount === null ? r.rows.length : r.rowCount,
});

const asError = (e: unknown): Error => (e instanceof Error ? e : new Error(String(e)));

/** A failed connection, or a server error that ended the session (severity FATAL or PANIC). */
const endsSession = (e: unknown): boolean => {
  const severity = (e as { severity?: unknown } | null)?.severity;
  return isConnectionFailure(e) || severity === 'FATAL' || severity === 'PANIC';
};

export interface Pipeline {
  /** Statements run first in the transaction, before the request's own, in the same round trip. */
  readonly opening: readonly RenderedSql[];
  /**
   * `single`: the opening statements and the one statement go with one Sync (one implicit
   * transaction, no BEGIN or COMMIT); `transaction`: BEGIN, the opening and the first statement go
   * in one write, the rest follow, then COMMIT.
   */
  readonly mode: RunMode;
  /** What to throw for the driver error of an opening statement; default: mapped like any error. */
  openingError?(e: unknown): unknown;
  /** What to throw for the driver error of a request statement; undefined: mapped like any error. */
  statementError?(e: unknown): unknown;
  /** The request's client went away: dropped before it runs, its statement cancelled (RunOptions). */
  readonly signal?: AbortSignal | undefined;
}

export interface PgAdapter extends DbAdapter {
  readonly kind: 'postgres';
  /**
   * Runs `fn` in one transaction: `opening` and `fn`'s first statement are written in one segment
   * (with one Sync in `single` mode, on a lane shared with other requests; after BEGIN in
   * `transaction` mode, on a client of its own), so that statement costs one round trip. A failing
   * statement aborts the transaction; a client of its own is rolled back before it returns to the
   * pool, and a client whose connection failed is destroyed.
   */
  pipelined<T>(pipeline: Pipeline, fn: (session: DbSession) => Promise<T>): Promise<T>;
}

/**
 * True for a PostgreSQL adapter with pipelined transactions (the native RLS path needs them): this
 * adapter, or one pinned to a transaction of it (runtime/policy-test/pinned-adapter.ts).
 */
export const isPgAdapter = (adapter: DbAdapter): adapter is PgAdapter =>
  adapter.kind === 'postgres' && typeof (adapter as Partial<PgAdapter>).pipelined === 'function';

/**
 * Sends `queries` back to back on a pipelined client. pg corks the socket around each query's
 * own messages; holding an outer cork keeps all of them in one write, hence one network flight.
 */
function sendPipelined(
  client: pg.PoolClient,
  queries: readonly pg.QueryConfig[],
): Promise<PromiseSettledResult<pg.QueryResult>[]> {
  const { stream } = client.connection;
  stream.cork();
  try {
    return Promise.allSettled(queries.map((query) => client.query(query)));
  } finally {
    stream.uncork();
  }
}

/** What an opening statement's driver error is thrown as: the pipeline's own, or mapped. */
const openingError = (pipeline: Pipeline, e: unknown): unknown => pipeline.openingError?.(e) ?? mapPgError(e);

const NO_OPENING: Pipeline = Object.freeze({ opening: [], mode: 'single' });
const BEGIN: pg.QueryConfig = Object.freeze({ text: 'BEGIN' });
const COMMIT: pg.QueryConfig = Object.freeze({ text: 'COMMIT' });

/** What rest says when a pooler stands between it and PostgreSQL without `-db.pooler transaction`. */
export const POOLER_HINT = 'looks like a transaction pooler: start with -db.pooler transaction';

/** SQLSTATE 26000: a named statement this connection prepared is not on the backend it reached. */
const INVALID_STATEMENT_NAME = '26000';

/** How a pooled adapter runs: through a transaction pooler or not, and its statement timeout. */
export interface PgAdapterSettings {
  readonly pooler?: 'transaction';
  /** Set inside each transaction through a pooler (at connect otherwise); 0: none. */
  readonly statementTimeoutMs?: number;
  readonly logger?: DbLogger;
  /** Most requests that wait for a connection (AdapterOptions.maxWaiting). */
  readonly maxWaiting?: number;
}

/** A checked-out client's state: `fail` marks it unusable, so it is destroyed on release. */
interface Health {
  fail(e: unknown): void;
  broken(): boolean;
}

class PgAdapterImpl implements PgAdapter {
  readonly kind = 'postgres' as const;
  readonly returning: Returning = { insert: true, update: true, delete: true };
  readonly dialect = postgresDialect;
  readonly #pool: pg.Pool;
  readonly #prepared: PreparedStatements;
  /** Shared pipelined clients for work of one Sync (pg-lanes.ts). */
  readonly #lanes: Lanes;
  /** The tables' column names and types at the last introspection. */
  #columnTypes: string | undefined;
  #closed = false;
  /**
   * Through a transaction pooler: the statement timeout, set first in every transaction (a
   * connection's own settings would stay on a backend that other clients share). Else empty.
   */
  readonly #timeout: readonly pg.QueryConfig[];
  readonly #logger: DbLogger | undefined;
  /** A 26000 said a pooler stands in between (without -db.pooler transaction): logged once. */
  #poolerSeen = false;

  /** Most requests waiting for a client of their own (pg-pool's queue); the lanes' queue has its own. */
  readonly #maxWaiting: number;

  constructor(pool: pg.Pool, prepared: PreparedStatements, settings: PgAdapterSettings = {}) {
    this.#pool = pool;
    this.#prepared = prepared;
    this.#logger = settings.logger;
    const timeoutMs = settings.statementTimeoutMs ?? 0;
    this.#timeout =
      settings.pooler === 'transaction' && timeoutMs > 0
        ? [
            Object.freeze({
              text: "SELECT set_config('statement_timeout', $1, true)",
              values: [String(timeoutMs)],
            }),
          ]
        : [];
    this.#maxWaiting = settings.maxWaiting ?? DEFAULT_MAX_WAITING;
    this.#lanes = createLanes(pool, {
      limit: laneCount(pool.options.max),
      depth: LANE_DEPTH,
      stale: (client) => prepared.isStale(client),
      connectError: mapPgError,
      maxWaiting: this.#maxWaiting,
      overloaded,
      gone: clientGone,
      cancel: (client) => cancelBackend(pool.options, client),
    });
  }

  #ensureOpen(): void {
    if (this.#closed) throw adapterClosed();
  }

  /**
   * Runs `fn` on a checked-out client. pg-pool removes its error listener from a checked-out
   * client, and an `error` event without a listener (the socket of a killed backend) would crash
   * the process. A client whose connection failed, whose ROLLBACK failed (it may still be inside a
   * transaction) or that was prepared before a schema change is destroyed, never reused.
   */
  async #withClient<T>(
    fn: (client: pg.PoolClient, health: Health) => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T> {
    this.#ensureOpen();
    throwIfGone(signal);
    // A request waits for a client behind at most #maxWaiting others (the server's own work does not count).
    if (signal !== undefined && this.#pool.waitingCount >= this.#maxWaiting) throw overloaded();
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (e) {
      throw mapPgError(e);
    }
    if (isGone(signal)) {
      client.release();
      throw clientGone();
    }
    let broken: Error | undefined;
    const fail = (e: unknown): void => {
      broken ??= asError(e);
    };
    // The client is this request's alone: a cancel can meet only its statements, and the client
    // goes back to the pool only once no cancel is on its way.
    let settled = false;
    const cancelling = cancelWhenGone(
      signal,
      () => cancelBackend(this.#pool.options, client),
      () => settled,
    );
    client.on('error', fail);
    try {
      return await fn(client, { fail, broken: () => broken !== undefined });
    } catch (e) {
      throw isGone(signal) ? clientGone(e) : e;
    } finally {
      settled = true;
      await cancelling.done();
      client.release(broken ?? this.#prepared.isStale(client));
      client.removeListener('error', fail);
    }
  }

  query(sql: RenderedSql, options?: RunOptions): Promise<QueryResult> {
    const signal = options?.signal;
    return this.#oneSync(signal === undefined ? NO_OPENING : { opening: [], mode: 'single', signal }, sql);
  }

  /**
   * `opening` and `sql` with one Sync, on a lane shared with other requests (pg-lanes.ts) or, when
   * none can take it, on a client of its own.
   */
  async #oneSync(pipeline: Pipeline, sql: RenderedSql): Promise<QueryResult> {
    this.#ensureOpen();
    const { signal } = pipeline;
    throwIfGone(signal);
    return (
      this.#lanes.run((lane) => this.#oneSyncOn(lane.client, lane.retire, pipeline, sql), signal) ??
      this.#withClient((client, { fail }) => this.#oneSyncOn(client, fail, pipeline, sql), signal)
    );
  }

  /** `fn` with a session whose one statement goes with `pipeline`'s opening in one Sync. */
  async #single<T>(pipeline: Pipeline, fn: (session: DbSession) => Promise<T>): Promise<T> {
    this.#ensureOpen();
    let statements = 0;
    return fn({
      query: async (sql) => {
        statements += 1;
        // After its one Sync the transaction has committed and its settings are gone: a second
        // statement would run outside them. Never let it.
        if (statements > 1) throw internalError('a single-statement request ran a second statement');
        return this.#oneSync(pipeline, sql);
      },
    });
  }

  /** Sends the statements on `client` (synchronously, before the first await) and maps how they ended. */
  async #oneSyncOn(
    client: pg.ClientBase,
    fail: (e: unknown) => void,
    pipeline: Pipeline,
    sql: RenderedSql,
  ): Promise<QueryResult> {
    const opening = [...this.#timeout, ...pipeline.opening.map((o) => this.#prepared.queryFor(client, o))];
    const statement = this.#prepared.queryFor(client, sql);
    let outcome: OneSyncOutcome;
    try {
      // The opening statements' rows (the settings' echoed values) are never read.
      outcome = await OneSync.run(client, [...opening, statement], types, opening.length);
    } catch (e) {
      fail(e);
      throw mapPgError(e);
    }
    if (outcome.ok) {
      const result = outcome.results[opening.length];
      if (result === undefined) throw internalError('the statement of a one-Sync request gave no result');
      return toResult(result);
    }
    // A failed statement leaves its client usable (one-sync.ts knows which names PostgreSQL kept);
    // a failed connection, or a session the server ended (FATAL, e.g. a terminated backend), does not.
    if (endsSession(outcome.error)) fail(outcome.error);
    // Its client went away: the failure is most likely the cancel of its statement.
    if (isGone(pipeline.signal)) throw clientGone(outcome.error);
    if (outcome.index < opening.length) {
      throw this.#poolerError(outcome.error) ?? openingError(pipeline, outcome.error);
    }
    throw this.#statementError(pipeline, outcome.error, statement);
  }

  /** What a request statement's driver error is thrown as: schema_changed, the pipeline's own, or mapped. */
  #statementError(pipeline: Pipeline, e: unknown, query: pg.QueryConfig): unknown {
    return (
      this.#poolerError(e) ??
      this.#prepared.schemaChanged(e, query) ??
      pipeline.statementError?.(e) ??
      mapPgError(e)
    );
  }

  /**
   * 26000 (a statement this connection prepared is not there): a transaction pooler handed the
   * connection's transactions to another backend. One log line; the request is 503, and from now
   * on statements go unnamed, as with -db.pooler transaction.
   */
  #poolerError(e: unknown): RestError | undefined {
    if (sqlStateOf(e) !== INVALID_STATEMENT_NAME) return undefined;
    this.#prepared.stopNaming();
    if (!this.#poolerSeen) {
      this.#poolerSeen = true;
      this.#logger?.warn(errorFields(e), `PostgreSQL ${POOLER_HINT}`);
    }
    return new RestError('transaction_pooler', `PostgreSQL ${POOLER_HINT}`, {
      category: 'unavailable',
      cause: e,
    });
  }

  /** BEGIN travels with the first statement: a one-statement transaction costs two round trips. */
  transaction<T>(fn: (tx: DbSession) => Promise<T>, options?: RunOptions): Promise<T> {
    return this.pipelined({ opening: [], mode: 'transaction', signal: options?.signal }, fn);
  }

  pipelined<T>(pipeline: Pipeline, fn: (session: DbSession) => Promise<T>): Promise<T> {
    // One Sync: one implicit transaction that the Sync commits (one-sync.ts), no BEGIN and no COMMIT.
    if (pipeline.mode === 'single') return this.#single(pipeline, fn);
    return this.#withClient(async (client, health) => {
      const noteFailure = (e: unknown): void => {
        if (isConnectionFailure(e)) health.fail(e);
      };
      const send = async (query: pg.QueryConfig): Promise<QueryResult> => {
        try {
          return toResult(await client.query(query));
        } catch (e) {
          noteFailure(e);
          throw this.#statementError(pipeline, e, query);
        }
      };
      const openingStatements = pipeline.opening.map((sql) => this.#prepared.queryFor(client, sql));
      const opening = [BEGIN, ...this.#timeout, ...openingStatements];
      const first = async (sql: RenderedSql): Promise<QueryResult> => {
        const statement = this.#prepared.queryFor(client, sql);
        const settled = await sendPipelined(client, [...opening, statement]);
        settled.forEach((s) => s.status === 'rejected' && noteFailure(s.reason));
        const index = settled.findIndex((s) => s.status === 'rejected');
        const failed = settled[index];
        if (failed?.status === 'rejected') {
          if (index < opening.length) {
            throw this.#poolerError(failed.reason) ?? openingError(pipeline, failed.reason);
          }
          throw this.#statementError(pipeline, failed.reason, statement);
        }
        const result = settled[opening.length];
        if (result?.status !== 'fulfilled') throw new Error('the pipelined statement gave no result');
        return toResult(result.value);
      };

      let statements = 0;
      const session: DbSession = {
        query: async (sql) => {
          // A client gone mid-transaction: nothing more is sent, and the transaction rolls back.
          throwIfGone(pipeline.signal);
          statements += 1;
          if (statements === 1) return first(sql);
          return send(this.#prepared.queryFor(client, sql));
        },
      };
      try {
        const result = await fn(session);
        throwIfGone(pipeline.signal);
        if (statements > 0) await send(COMMIT);
        return result;
      } finally {
        if (!health.broken() && client.getTransactionStatus() !== 'I') {
          try {
            await client.query('ROLLBACK');
          } catch (e) {
            health.fail(e);
          }
        }
      }
    }, pipeline.signal);
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
    const [columns, keys, children] = await Promise.all([
      this.query({ text: INTROSPECT_COLUMNS, values: [] }),
      this.query({ text: INTROSPECT_KEYS, values: [] }),
      this.query({ text: INTROSPECT_CHILDREN, values: [] }),
    ]);
    // Statements prepared before a column changed may describe other result types: the
    // connections holding them are retired.
    const columnTypes = JSON.stringify(
      columns.rows.map((r) => [r['table_name'], r['column_name'], r['db_type']]),
    );
    if (this.#columnTypes !== undefined && this.#columnTypes !== columnTypes) this.#prepared.invalidate();
    this.#columnTypes = columnTypes;
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
      unservedTables(columns.rows, children.rows),
    );
  }

  async schemaVersion(): Promise<string> {
    const r = await this.query({ text: SCHEMA_VERSION, values: [] });
    return String(r.rows[0]?.['version']);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#lanes.close();
    await this.#pool.end();
  }
}

/** Opens a pool and checks one connection; when that fails, throws OPEN_FAILED saying why. */
export async function createPgAdapter(
  connectionString: string,
  options: AdapterOptions = {},
): Promise<PgAdapter> {
  const { pooler } = options;
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
    // A startup parameter: every statement on the pool's connections has it, the native-RLS
    // runner's included; 0 sends none and leaves the server's own setting
    // (https://www.postgresql.org/docs/current/runtime-config-client.html#GUC-STATEMENT-TIMEOUT).
    // A transaction pooler passes on no such parameter: each transaction sets it instead.
    statement_timeout: pooler === 'transaction' ? 0 : (options.statementTimeoutMs ?? 0),
  });
  // An idle client whose server went away emits `error` on the pool; without a listener that
  // would crash the process. pg-pool drops the client, and the next checkout connects anew.
  pool.on('error', (e) => options.logger?.warn(errorFields(e), 'idle PostgreSQL connection failed'));
  try {
    await pool.query('SELECT 1');
    if (pooler !== 'transaction' && (await behindTransactionPooler(pool))) {
      throw new RestError('transaction_pooler', POOLER_HINT, { category: 'usage' });
    }
  } catch (e) {
    await pool.end().catch(() => undefined);
    if (e instanceof RestError) throw e;
    // PgBouncer refuses a startup parameter it does not know (statement_timeout) and says so.
    if (/unsupported startup parameter/.test(errorFields(e)['error'] as string)) {
      throw new RestError('transaction_pooler', POOLER_HINT, { category: 'usage', cause: e });
    }
    throw connectionFailure(pgErrors, e);
  }
  return pgAdapterOnPool(pool, {
    ...(pooler === undefined ? {} : { pooler }),
    ...(options.statementTimeoutMs === undefined ? {} : { statementTimeoutMs: options.statementTimeoutMs }),
    ...(options.logger === undefined ? {} : { logger: options.logger }),
    ...(options.maxWaiting === undefined ? {} : { maxWaiting: options.maxWaiting }),
  });
}

const PROBE_READ = "SELECT current_setting('rest.pooler_probe', true) AS mark";
/**
 * How long the probe's first client may wait while the other holds a transaction (PGlite). A
 * direct connection slower than that only makes the probe say no, as it does for a pooler that
 * gave the transaction another backend: the first 26000 names the pooler then.
 */
const PROBE_WAIT_MS = 200;

/**
 * Whether the pool's connections reach PostgreSQL through a transaction pooler: a session setting
 * one client made is gone from its next statement while another client holds a transaction open —
 * the pooler gave that transaction the backend the first had used (PgBouncer hands out its most
 * recently used one) and the first another. A direct connection keeps its session whatever other
 * connections do. A server that serves one connection's transaction at a time (PGlite's one
 * backend) keeps the first client waiting instead: after PROBE_WAIT_MS the probe says no. Both
 * clients are closed afterwards, their settings with them.
 */
async function behindTransactionPooler(pool: pg.Pool): Promise<boolean> {
  if (pool.options.max < 2) return false;
  const mark = randomBytes(8).toString('hex');
  const markOf = (r: pg.QueryResult): unknown => (r.rows[0] as { mark?: unknown } | undefined)?.mark;
  const first = await pool.connect();
  let second: pg.PoolClient | undefined;
  try {
    await first.query("SELECT set_config('rest.pooler_probe', $1, false)", [mark]);
    second = await pool.connect();
    await second.query('BEGIN');
    await second.query(PROBE_READ);
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<'waited'>((resolve) => (timer = setTimeout(resolve, PROBE_WAIT_MS, 'waited')));
    const reading = first.query(PROBE_READ);
    const kept = await Promise.race([reading, waited]);
    clearTimeout(timer);
    await second.query('ROLLBACK');
    if (kept === 'waited') {
      await reading.catch(() => undefined);
      return false;
    }
    return markOf(kept) !== mark;
  } finally {
    second?.release(true);
    first.release(true);
  }
}

/**
 * An adapter on a pool the caller made (its clients must be `pipeline: true`); createPgAdapter's
 * own pool adds the type parsers. Tests use it to watch the one connection of a `max: 1` pool.
 */
export function pgAdapterOnPool(pool: pg.Pool, settings: PgAdapterSettings = {}): PgAdapter {
  // The adapter ends the pool's clients (lanes, broken clients, close). A client still closing when
  // its backend is terminated (a restart, DROP DATABASE … WITH (FORCE)) reports that through the
  // pool's `error` event, which would crash the process without a listener. createPgAdapter's pool
  // has one that logs.
  if (pool.listenerCount('error') === 0) pool.on('error', () => undefined);
  return new PgAdapterImpl(
    pool,
    createPreparedStatements(settings.pooler === 'transaction' ? 0 : undefined),
    settings,
  );
}
