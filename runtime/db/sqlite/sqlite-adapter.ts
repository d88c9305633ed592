// SQLite adapter on one better-sqlite3 connection: WAL and a busy timeout, a mutex that keeps
// concurrent requests out of an open transaction, and values converted by declared column type.

import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { sqliteDialect } from '../../../compiler/sql/sqlite-dialect.js';
import type { ColumnType } from '../../../compiler/types.js';
import { internalError } from '../../../errors/rest-error.js';
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
import type { AdapterOptions } from '../adapter-options.js';
import { buildSnapshot, type IntrospectedColumn, type IntrospectedKeyPart } from '../build-snapshot.js';
import {
  bindParam,
  decimalValue,
  integerValue,
  jsonValue,
  localTimestamp,
  utcTimestamp,
} from '../db-values.js';
import {
  adapterClosed,
  clientGone,
  connectionFailure,
  isGone,
  openFailure,
  sqlStateOf,
  throwIfGone,
} from '../map-db-error.js';
import { mapSqliteError, schemaMoved, SQLITE_ERROR, sqliteErrors } from './sqlite-errors.js';

/** How a declared column type is compared (ColumnType) and how its values are read back. */
type ReadAs = 'boolean' | 'json' | 'timestamp' | 'decimal' | 'plain';

// SQLite keeps any declared type name and derives an affinity from it
// (https://www.sqlite.org/datatype3.html#determination_of_column_affinity); booleans, JSON and
// dates have no affinity of their own, so their names are recognised first.
function classifyDeclaredType(declared: string | null | undefined): {
  readonly type: ColumnType;
  readonly readAs: ReadAs;
} {
  const t = (declared ?? '').toLowerCase();
  if (/^bool(ean)?\b/.test(t)) return { type: 'boolean', readAs: 'boolean' };
  if (/^jsonb?\b/.test(t)) return { type: 'other', readAs: 'json' };
  if (/^(timestamp|datetime)/.test(t)) return { type: 'other', readAs: 'timestamp' };
  if (/^(date|time)\b/.test(t)) return { type: 'other', readAs: 'plain' };
  if (t.includes('int')) return { type: 'integer', readAs: 'plain' };
  if (t.includes('char') || t.includes('clob') || t.includes('text'))
    return { type: 'text', readAs: 'plain' };
  if (/real|floa|doub|dec|numeric/.test(t)) return { type: 'decimal', readAs: 'decimal' };
  return { type: 'other', readAs: 'plain' };
}

/**
 * How a result column reads: as its declared type, or, for an expression that carries a table
 * column's values (Statement.typedAs), as that column's declared type.
 */
function readAsOf(column: Database.ColumnDefinition, typedAs: Statement['typedAs']): ReadAs {
  const declared = column.type ?? (column.column === null ? typedAs?.get(column.name)?.dbType : undefined);
  return classifyDeclaredType(declared).readAs;
}

const ZONED = /(Z|[+-]\d{2}(:?\d{2})?)$/i;

/** Timestamps are stored as the text that was written; they come back in ISO-8601 form. */
function timestampValue(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  return ZONED.test(v) && /\d{2}:\d{2}/.test(v) ? utcTimestamp(v) : localTimestamp(v);
}

function readValue(value: unknown, readAs: ReadAs): unknown {
  if (typeof value === 'bigint') {
    // Every integer is read as a BigInt (defaultSafeIntegers) so none is silently rounded.
    if (readAs === 'boolean') return value !== 0n;
    return readAs === 'decimal' ? decimalValue(value) : integerValue(value);
  }
  switch (readAs) {
    case 'boolean':
      return typeof value === 'number' ? value !== 0 : value;
    case 'json':
      return jsonValue(value);
    case 'timestamp':
      return timestampValue(value);
    case 'decimal':
    case 'plain':
      return value;
  }
}

/** better-sqlite3 binds numbers as REAL (a REAL 5.0 is not a valid LIMIT) and cannot bind booleans. */
function bindSqlite(value: unknown): unknown {
  const v = bindParam(value);
  if (typeof v === 'boolean') return v ? 1n : 0n;
  if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
  if (v instanceof Date) return v.toISOString();
  return v;
}

const INSERT = /^\s*(insert|replace)\b/i;

const INTROSPECT = `
SELECT m.name AS table_name, p.name AS column_name, p.type AS declared, p."notnull" AS not_null,
       p.dflt_value AS dflt, p.pk AS pk, p.hidden AS hidden, l.wr AS without_rowid
FROM sqlite_schema m
JOIN pragma_table_list l ON l.name = m.name AND l.schema = 'main'
JOIN pragma_table_xinfo(m.name) p
WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
ORDER BY m.name, p.cid`;

/** A FIFO lock: one transaction at a time; plain statements wait while one is open. */
class Mutex {
  #held = false;
  readonly #waiting: (() => void)[] = [];

  get held(): boolean {
    return this.#held;
  }

  acquire(): Promise<void> {
    if (!this.#held) {
      this.#held = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  release(): void {
    const next = this.#waiting.shift();
    if (next === undefined) this.#held = false;
    else next();
  }
}

const MAX_CACHED_STATEMENTS = 500;
/** How long a statement waits for another connection's lock before it fails with 503. */
const BUSY_TIMEOUT_MS = 5000;

const isBusy = (e: unknown): boolean => {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
};

class SqliteAdapter implements DbAdapter {
  readonly kind = 'sqlite' as const;
  readonly returning: Returning = { insert: true, update: true, delete: true };
  readonly dialect = sqliteDialect;
  readonly #db: Database.Database;
  readonly #lock = new Mutex();
  readonly #statements = new Map<string, Database.Statement>();
  /**
   * The result columns of each prepared read, asked of SQLite once: stmt.columns() costs more than
   * the rest of a page's conversion. Forgotten with the schema (introspect(); exec() prepares anew).
   */
  #resultColumns = new WeakMap<Database.Statement, readonly Database.ColumnDefinition[]>();
  /** PRAGMA schema_version at the last introspection: the schema requests are planned against. */
  #introspectedVersion: unknown;
  #closed = false;

  constructor(db: Database.Database) {
    this.#db = db;
  }

  #prepare(text: string): Database.Statement {
    let stmt = this.#statements.get(text);
    if (stmt === undefined) {
      stmt = this.#db.prepare(text);
      if (this.#statements.size >= MAX_CACHED_STATEMENTS) {
        const oldest = this.#statements.keys().next().value;
        if (oldest !== undefined) this.#statements.delete(oldest);
      }
      this.#statements.set(text, stmt);
    }
    return stmt;
  }

  /**
   * Runs one statement synchronously and converts its rows; throws the driver's error, or
   * schema_changed for a statement that SQLite could not compile (SQLITE_ERROR: "no such column",
   * "no such table") on a schema other than the one last introspected.
   */
  #execute(sql: Statement): QueryResult {
    try {
      return this.#executeNow(sql);
    } catch (e) {
      if (sqlStateOf(e) === SQLITE_ERROR && this.#schemaMoved()) throw mapSqliteError(schemaMoved(e));
      throw e;
    }
  }

  #schemaMoved(): boolean {
    if (this.#introspectedVersion === undefined || !this.#db.open) return false;
    return this.#db.pragma('schema_version', { simple: true }) !== this.#introspectedVersion;
  }

  #executeNow(sql: Statement): QueryResult {
    const stmt = this.#prepare(sql.text);
    const values = sql.values.map(bindSqlite);
    if (!stmt.reader) {
      const r = stmt.run(...values);
      return r.changes > 0 && INSERT.test(sql.text)
        ? { rows: [], rowCount: r.changes, insertId: Number(r.lastInsertRowid) }
        : { rows: [], rowCount: r.changes };
    }
    const rows = stmt.all(...values) as Record<string, unknown>[];
    if (rows.length > 0) {
      let definitions = this.#resultColumns.get(stmt);
      if (definitions === undefined) {
        definitions = stmt.columns();
        this.#resultColumns.set(stmt, definitions);
      }
      const columns = definitions.map((c) => [c.name, readAsOf(c, sql.typedAs)] as const);
      for (const row of rows) for (const [name, readAs] of columns) row[name] = readValue(row[name], readAs);
    }
    return { rows: rows as Row[], rowCount: rows.length };
  }

  /**
   * Runs `fn`, retrying while another connection holds the lock, for up to BUSY_TIMEOUT_MS.
   * The waits are timers, not SQLite's busy handler, which sleeps inside the call and would
   * freeze the event loop (and every other request of this process) while it waits.
   */
  async #retryBusy<T>(fn: () => T): Promise<T> {
    try {
      return await retryWhileBusy(fn);
    } catch (e) {
      throw mapSqliteError(e);
    }
  }

  #ensureOpen(): void {
    if (this.#closed) throw adapterClosed();
  }

  /** Runs `fn` outside any transaction: at once when the connection is free (the common case),
   * else after the open transaction ends; a busy retry holds the lock while it waits. */
  async #outsideTransaction<T>(fn: () => T): Promise<T> {
    this.#ensureOpen();
    if (!this.#lock.held) {
      try {
        return fn();
      } catch (e) {
        if (!isBusy(e)) throw mapSqliteError(e);
      }
    }
    await this.#lock.acquire();
    try {
      this.#ensureOpen();
      return await this.#retryBusy(fn);
    } finally {
      this.#lock.release();
    }
  }

  // A statement runs synchronously to its end (nothing can interrupt it, docs/operations.md): a
  // request whose client has gone is dropped only before it starts, or while it waits for the lock.
  query(sql: Statement, options?: RunOptions): Promise<QueryResult> {
    const signal = options?.signal;
    return this.#outsideTransaction(() => {
      throwIfGone(signal);
      return this.#execute(sql);
    });
  }

  async transaction<T>(fn: (tx: DbSession) => Promise<T>, options?: RunOptions): Promise<T> {
    this.#ensureOpen();
    throwIfGone(options?.signal);
    await this.#lock.acquire();
    if (isGone(options?.signal)) {
      this.#lock.release();
      throw clientGone();
    }
    let active = true;
    const tx: DbSession = {
      query: async (sql) => {
        if (!active) {
          throw internalError('transaction session used after its transaction ended');
        }
        return this.#retryBusy(() => this.#execute(sql));
      },
    };
    try {
      this.#ensureOpen();
      // IMMEDIATE takes the write lock up front: a deferred transaction that reads and then
      // writes fails with SQLITE_BUSY at once, whatever the timeout, when another connection
      // writes in between (https://www.sqlite.org/lang_transaction.html).
      await this.#retryBusy(() => this.#execute({ text: 'BEGIN IMMEDIATE', values: [] }));
      const result = await fn(tx);
      await this.#retryBusy(() => this.#execute({ text: 'COMMIT', values: [] }));
      return result;
    } catch (e) {
      if (this.#db.open && this.#db.inTransaction) {
        try {
          this.#db.exec('ROLLBACK');
        } catch {
          // SQLite already rolled back (e.g. after SQLITE_FULL); inTransaction is false again.
        }
      }
      // Driver errors were mapped by #retryBusy(); the caller's own errors pass through unchanged.
      throw e;
    } finally {
      active = false;
      this.#lock.release();
    }
  }

  exec(sqlText: string): Promise<void> {
    return this.#outsideTransaction(() => {
      try {
        this.#db.exec(sqlText);
      } finally {
        this.#statements.clear();
      }
    });
  }

  async introspect(): Promise<SchemaSnapshot> {
    const { rows, version } = await this.#outsideTransaction(() => ({
      rows: this.#executeNow({ text: INTROSPECT, values: [] }).rows,
      version: this.#db.pragma('schema_version', { simple: true }),
    }));
    this.#introspectedVersion = version;
    this.#resultColumns = new WeakMap();
    const columns: IntrospectedColumn[] = [];
    const keyParts: { readonly table: string; readonly column: string; readonly position: number }[] = [];
    const keyCount = new Map<string, number>();
    for (const r of rows) {
      const table = String(r['table_name']);
      const pk = Number(r['pk']);
      if (pk > 0) {
        keyParts.push({ table, column: String(r['column_name']), position: pk });
        keyCount.set(table, (keyCount.get(table) ?? 0) + 1);
      }
    }
    for (const r of rows) {
      // hidden: 1 = hidden column of a virtual table; 2, 3 = generated column.
      const hidden = Number(r['hidden']);
      if (hidden === 1) continue;
      const table = String(r['table_name']);
      const declared = r['declared'] === null ? '' : String(r['declared']);
      // A sole INTEGER PRIMARY KEY of a rowid table is the rowid: filled in, never NULL
      // (https://www.sqlite.org/lang_createtable.html#rowid).
      const rowidAlias =
        Number(r['pk']) === 1 &&
        keyCount.get(table) === 1 &&
        declared.toUpperCase() === 'INTEGER' &&
        Number(r['without_rowid']) === 0;
      columns.push({
        table,
        name: String(r['column_name']),
        type: classifyDeclaredType(declared).type,
        dbType: declared.toLowerCase(),
        nullable: Number(r['not_null']) === 0 && !rowidAlias,
        hasDefault: r['dflt'] !== null || hidden > 1 || rowidAlias,
        autoIncrement: rowidAlias,
      });
    }
    const keys: IntrospectedKeyPart[] = keyParts
      .sort((a, b) => (a.table === b.table ? a.position - b.position : a.table < b.table ? -1 : 1))
      .map(({ table, column }) => ({ table, column }));
    return buildSnapshot(columns, keys);
  }

  schemaVersion(): Promise<string> {
    return this.#outsideTransaction(() => String(this.#db.pragma('schema_version', { simple: true })));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    await this.#lock.acquire();
    this.#closed = true;
    this.#statements.clear();
    this.#db.close();
    this.#lock.release();
  }
}

/** Runs `fn` until it does not fail with SQLITE_BUSY, for at most BUSY_TIMEOUT_MS. */
async function retryWhileBusy<T>(fn: () => T): Promise<T> {
  const deadline = Date.now() + BUSY_TIMEOUT_MS;
  for (let delay = 1; ; delay = Math.min(delay * 2, 50)) {
    try {
      return fn();
    } catch (e) {
      if (!isBusy(e) || Date.now() + delay > deadline) throw e;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

/**
 * Opens the database file, or creates it (logged once) when its directory exists; when that fails,
 * throws OPEN_FAILED saying why.
 */
export async function createSqliteAdapter(path: string, options: AdapterOptions = {}): Promise<DbAdapter> {
  try {
    return await openSqlite(path, options);
  } catch (e) {
    throw connectionFailure(sqliteErrors, e);
  }
}

async function openSqlite(path: string, options: AdapterOptions): Promise<DbAdapter> {
  const file = path !== ':memory:';
  // better-sqlite3 checks the directory itself and throws a TypeError without a code.
  if (file && !existsSync(dirname(path))) {
    throw openFailure(
      `the directory ${dirname(path)} does not exist (rest creates the file, not its directory)`,
    );
  }
  const created = file && !existsSync(path);
  // No busy handler in SQLite itself: lock waits are retried with timers (#retryBusy).
  const db = new Database(path, { timeout: 0 });
  try {
    db.defaultSafeIntegers(true);
    // WAL lets readers of other processes run while one writes (https://www.sqlite.org/wal.html).
    // Switching to it takes a lock for a moment: processes opening one file at once (several
    // servers, `-workers`) wait for each other like any busy statement.
    if (file) await retryWhileBusy(() => db.pragma('journal_mode = WAL'));
    db.pragma('foreign_keys = ON');
  } catch (e) {
    db.close();
    throw e;
  }
  if (created) options.logger?.info({ path }, `created the SQLite database file ${path}`);
  return new SqliteAdapter(db);
}
