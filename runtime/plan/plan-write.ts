// create / update / delete requests → validated rows and the INSERT, UPDATE and DELETE statements
// the write handlers run inside one transaction, with the stored rows and the policy check handed
// back (RETURNING, or a read-back by key where the database has no RETURNING).

import type { Dialect } from '../../compiler/sql/dialect.js';
import { SqlBuilder, type SqlFragment } from '../../compiler/sql/fragment.js';
import type { ColumnInfo, Row, TableInfo } from '../db/adapter.js';
import type { JsonObject } from '../request/types.js';
import type { WriteRow } from '../enforce/authorizer.js';
import { driverValue } from './bind.js';
import { checkDeclaredLength, coerceBodyValue } from './coerce-value.js';
import { columnOf, freeAlias } from './columns.js';
import { columnBuilder, type Masks } from './masked-columns.js';
import { appendColumnList } from './plan-read.js';

/** A body object → column values validated against their types (unknown column → 400). */
export function toWriteRow(table: TableInfo, body: JsonObject): WriteRow {
  return Object.fromEntries(
    Object.entries(body).map(([name, value]) => {
      const column = columnOf(table, name, 'body');
      return [column.name, coerceBodyValue(column, value)];
    }),
  );
}

/** What a written value is bound as, once it is known to fit its column's declared length. */
function writtenValue(column: ColumnInfo, value: unknown, dialect: Dialect): unknown {
  checkDeclaredLength(column, value);
  return driverValue(column, value, dialect);
}

function entries(table: TableInfo, row: WriteRow): ReadonlyArray<readonly [ColumnInfo, unknown]> {
  return Object.entries(row).map(([name, value]) => [columnOf(table, name, 'body'), value] as const);
}

/**
 * A policy check the database evaluates on the rows a write stored: returned as column `name`,
 * 1 where the row satisfies `predicate` and 0 where it does not (FALSE and NULL alike).
 */
export interface StoredCheck {
  readonly name: string;
  readonly predicate: SqlFragment;
  /**
   * PostgreSQL: a row that fails the check ends the statement with division_by_zero, so nothing is
   * written even when a COMMIT follows in the same round trip (enforce/stored-checks.ts
   * `raisedCheckRefusal` recognises it).
   */
  readonly raising?: boolean;
  /**
   * Body keys granted under a column rule's condition (enforce/request-columns.ts): the flag is 2
   * where the policy holds and `predicate` does not. Never raising.
   */
  readonly columns?: ColumnCheck;
}

export interface ColumnCheck {
  readonly predicate: SqlFragment;
  /** The keys it judges, for the refusal. */
  readonly names: readonly string[];
}

/** A column alias no column of `table` has. */
export const checkColumnName = (table: TableInfo): string => freeAlias(table, 'rest_check');

/** What a write hands back per stored row: these columns, then the check's flag. */
export interface StoredShape {
  readonly columns: readonly ColumnInfo[];
  readonly check?: StoredCheck;
  /** The caller's masked columns, handed back masked (plan/masked-columns.ts). */
  readonly masks?: Masks;
}

/** Whether a write hands back anything of its stored rows (a RETURNING, a read-back). */
export const hasOutput = (shape: StoredShape | undefined): shape is StoredShape =>
  shape !== undefined && (shape.columns.length > 0 || shape.check !== undefined);

function appendOutput(b: SqlBuilder, { columns, check, masks }: StoredShape): void {
  appendColumnList(b, columns, masks);
  if (check === undefined) return;
  if (columns.length > 0) b.append(', ');
  if (check.columns !== undefined) {
    b.append('CASE WHEN (')
      .appendFragment(check.predicate)
      .append(') THEN CASE WHEN (')
      .appendFragment(check.columns.predicate)
      .append(') THEN 1 ELSE 2 END ELSE 0 END AS ')
      .appendIdent(check.name);
    return;
  }
  // The division depends on the row, so the planner cannot fold it before the check is evaluated
  // (unless the predicate is a constant FALSE, and then failing at once is right).
  b.append(check.raising === true ? '1 / CASE WHEN (' : 'CASE WHEN (')
    .appendFragment(check.predicate)
    .append(') THEN 1 ELSE 0 END AS ')
    .appendIdent(check.name);
}

/**
 * `INSERT` of `rows` in one statement, with `RETURNING` the stored rows' columns and check when
 * `returning` is given. Several rows need `dialect.manyRowInsert`: the statement names every
 * column any row sets, and a row that leaves one out gives it `DEFAULT`.
 */
export function insertStatement(
  table: TableInfo,
  rows: readonly WriteRow[],
  returning: StoredShape | undefined,
  dialect: Dialect,
): SqlFragment {
  const b = new SqlBuilder(dialect).append('INSERT INTO ').appendIdent(table.name);
  const named = [...new Set(rows.flatMap((row) => Object.keys(row)))].map((name) =>
    columnOf(table, name, 'body'),
  );
  if (named.length === 0 && rows.length === 1) b.append(dialect.insertDefaults);
  else {
    // Rows that set no column at all: every one is `DEFAULT` of the table's first column.
    const columns = named.length > 0 ? named : table.columns.slice(0, 1);
    b.append(' (');
    appendColumnList(b, columns);
    b.append(') VALUES ');
    rows.forEach((row, i) => {
      b.append(i > 0 ? ', (' : '(');
      columns.forEach((column, j) => {
        if (j > 0) b.append(', ');
        if (Object.hasOwn(row, column.name)) b.appendValue(writtenValue(column, row[column.name], dialect));
        else b.append('DEFAULT');
      });
      b.append(')');
    });
  }
  if (hasOutput(returning)) appendOutput(b.append(' RETURNING '), returning);
  return b.build();
}

/**
 * Rows one INSERT may store: PostgreSQL's protocol counts a statement's parameters in 16 bits, and
 * each row binds at most one value per column of its table.
 */
export const fitsOneInsert = (table: TableInfo, rows: readonly WriteRow[]): boolean =>
  rows.length * Math.max(1, table.columns.length) <= 65_535;

/** The stored rows `where` selects, with the check; for writes without RETURNING (MySQL). */
export function storedRowsStatement(
  table: TableInfo,
  where: SqlFragment,
  shape: StoredShape,
  dialect: Dialect,
): SqlFragment {
  const b = new SqlBuilder(dialect).append('SELECT ');
  if (hasOutput(shape)) appendOutput(b, shape);
  else b.append('1');
  return b.append(' FROM ').appendIdent(table.name).appendFragment(where).build();
}

/**
 * Without RETURNING (MySQL): ` WHERE` on the primary key of the row an insert just stored — an
 * auto-increment column by the id the database reports (it reports a given id too, and generates
 * one for 0 or NULL), any other key column by its written value, which the insert proved unique.
 * Undefined when the key is unknown.
 */
export function insertedKeyWhere(
  table: TableInfo,
  row: WriteRow,
  insertId: number | undefined,
  dialect: Dialect,
): SqlFragment | undefined {
  if (table.primaryKey.length === 0) return undefined;
  const key: Array<readonly [ColumnInfo, unknown]> = [];
  for (const name of table.primaryKey) {
    const column = columnOf(table, name, 'body');
    const value = column.autoIncrement
      ? insertId !== undefined && insertId > 0
        ? insertId
        : undefined
      : Object.hasOwn(row, name)
        ? row[name]
        : undefined;
    if (value === undefined || value === null) return undefined;
    key.push([column, value]);
  }
  return keyedWhere(table, [Object.fromEntries(key.map(([c, v]) => [c.name, v]))], dialect);
}

/** `UPDATE`, with `RETURNING` the stored rows' columns and check when `returning` is given. */
export function updateStatement(
  table: TableInfo,
  patch: WriteRow,
  where: SqlFragment,
  returning: StoredShape | undefined,
  dialect: Dialect,
): SqlFragment {
  const b = new SqlBuilder(dialect).append('UPDATE ').appendIdent(table.name).append(' SET ');
  entries(table, patch).forEach(([column, value], i) => {
    if (i > 0) b.append(', ');
    b.appendIdent(column.name)
      .append(' = ')
      .appendValue(writtenValue(column, value, dialect));
  });
  b.appendFragment(where);
  if (hasOutput(returning)) appendOutput(b.append(' RETURNING '), returning);
  return b.build();
}

/** `DELETE`, with `RETURNING` the deleted rows' `returning` columns when given. */
export function deleteStatement(
  table: TableInfo,
  where: SqlFragment,
  dialect: Dialect,
  returning?: readonly ColumnInfo[],
  masks?: Masks,
): SqlFragment {
  const b = new SqlBuilder(dialect).append('DELETE FROM ').appendIdent(table.name).appendFragment(where);
  if (returning !== undefined && returning.length > 0)
    appendColumnList(b.append(' RETURNING '), returning, masks);
  return b.build();
}

/** `columns` of the rows `where` selects, locked until the transaction ends. */
export function lockedRowsStatement(
  table: TableInfo,
  columns: readonly ColumnInfo[],
  where: SqlFragment,
  dialect: Dialect,
  masks?: Masks,
): SqlFragment {
  const b = new SqlBuilder(dialect).append('SELECT ');
  if (columns.length === 0) b.append('1');
  else appendColumnList(b, columns, masks);
  return b.append(' FROM ').appendIdent(table.name).appendFragment(where).append(dialect.forUpdate).build();
}

/**
 * ` WHERE` on the values `row` has for `columns` (an upsert's conflict target): equal, never NULL.
 * A masked column is compared as its masked value (plan/masked-columns.ts), as a filter is, so a
 * row whose value the caller may not read never meets, whatever it holds.
 */
export function conflictWhere(
  table: TableInfo,
  columns: readonly ColumnInfo[],
  row: WriteRow,
  dialect: Dialect,
  masks?: Masks,
): SqlFragment {
  const b = columnBuilder(dialect, masks).append(' WHERE ');
  columns.forEach((column, i) => {
    if (i > 0) b.append(' AND ');
    b.appendIdent(column.name)
      .append(' = ')
      .appendValue(driverValue(column, row[column.name], dialect));
  });
  return b.build();
}

/** The primary keys of the rows an update will change, locked until the transaction ends. */
export function lockedKeysStatement(table: TableInfo, where: SqlFragment, dialect: Dialect): SqlFragment {
  const b = new SqlBuilder(dialect).append('SELECT ');
  appendColumnList(
    b,
    table.primaryKey.map((name) => columnOf(table, name, 'filter')),
  );
  return b.append(' FROM ').appendIdent(table.name).appendFragment(where).append(dialect.forUpdate).build();
}

/** The keys `rows` will have after `patch` sets some of their key columns. */
export const patchedKeys = (table: TableInfo, rows: readonly Row[], patch: WriteRow): readonly Row[] =>
  rows.map((row) =>
    Object.fromEntries(
      table.primaryKey.map((name) => [name, Object.hasOwn(patch, name) ? patch[name] : row[name]]),
    ),
  );

/** ` WHERE` restricted to exactly `rows` by primary key (no phantom rows); undefined without a key. */
export function keyedWhere(
  table: TableInfo,
  rows: readonly Row[],
  dialect: Dialect,
): SqlFragment | undefined {
  if (table.primaryKey.length === 0) return undefined;
  const key = table.primaryKey.map((name) => columnOf(table, name, 'filter'));
  const b = new SqlBuilder(dialect).append(' WHERE ');
  if (rows.length === 0) return b.append(dialect.falseSql).build();
  rows.forEach((row, i) => {
    if (i > 0) b.append(' OR ');
    b.append('(');
    key.forEach((column, j) => {
      if (j > 0) b.append(' AND ');
      b.appendIdent(column.name)
        .append(' = ')
        .appendValue(driverValue(column, row[column.name], dialect));
    });
    b.append(')');
  });
  return b.build();
}
