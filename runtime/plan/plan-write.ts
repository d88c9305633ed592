// create / update / delete requests → validated rows and the INSERT, UPDATE, DELETE and locked
// SELECT statements the write handlers run inside one transaction.

import type { Dialect } from '../../compiler/sql/dialect.js';
import { SqlBuilder, type SqlFragment } from '../../compiler/sql/fragment.js';
import type { ColumnInfo, Row, TableInfo } from '../db/adapter.js';
import type { JsonObject } from '../request/types.js';
import type { WriteRow } from './authorizer.js';
import { driverValue } from './bind.js';
import { coerceBodyValue } from './coerce-value.js';
import { columnOf } from './columns.js';
import { appendColumnList } from './plan-read.js';
import type { QueryDialect } from './query-dialect.js';

/** A body object → column values validated against their types (unknown column → 400). */
export function toWriteRow(table: TableInfo, body: JsonObject): WriteRow {
  return Object.fromEntries(
    Object.entries(body).map(([name, value]) => {
      const column = columnOf(table, name, 'body');
      return [column.name, coerceBodyValue(column, value)];
    }),
  );
}

function entries(table: TableInfo, row: WriteRow): ReadonlyArray<readonly [ColumnInfo, unknown]> {
  return Object.entries(row).map(([name, value]) => [columnOf(table, name, 'body'), value] as const);
}

export function insertStatement(
  table: TableInfo,
  row: WriteRow,
  returning: readonly ColumnInfo[],
  dialect: Dialect,
  qd: QueryDialect,
): SqlFragment {
  const b = new SqlBuilder(dialect).append('INSERT INTO ').appendIdent(table.name);
  const values = entries(table, row);
  if (values.length === 0) b.append(qd.insertDefaults);
  else {
    b.append(' (');
    appendColumnList(
      b,
      values.map(([c]) => c),
    );
    b.append(') VALUES (');
    values.forEach(([column, value], i) => {
      if (i > 0) b.append(', ');
      b.appendValue(driverValue(column, value, qd));
    });
    b.append(')');
  }
  if (qd.returning) {
    b.append(' RETURNING ');
    appendColumnList(b, returning);
  }
  return b.build();
}

/**
 * Without RETURNING (MySQL): reads the inserted row back by its primary key, taken from the row
 * or, for an auto-increment column, from the insert id. Undefined when the key is unknown.
 */
export function selectInsertedStatement(
  table: TableInfo,
  row: WriteRow,
  insertId: number | undefined,
  columns: readonly ColumnInfo[],
  dialect: Dialect,
  qd: QueryDialect,
): SqlFragment | undefined {
  if (table.primaryKey.length === 0) return undefined;
  const key: Array<readonly [ColumnInfo, unknown]> = [];
  for (const name of table.primaryKey) {
    const column = columnOf(table, name, 'body');
    const given = Object.hasOwn(row, name) ? row[name] : undefined;
    const value =
      given ?? (column.autoIncrement && insertId !== undefined && insertId > 0 ? insertId : undefined);
    if (value === undefined || value === null) return undefined;
    key.push([column, value]);
  }
  const b = new SqlBuilder(dialect).append('SELECT ');
  appendColumnList(b, columns);
  b.append(' FROM ').appendIdent(table.name).append(' WHERE ');
  key.forEach(([column, value], i) => {
    if (i > 0) b.append(' AND ');
    b.appendIdent(column.name)
      .append(' = ')
      .appendValue(driverValue(column, value, qd));
  });
  return b.build();
}

export function updateStatement(
  table: TableInfo,
  patch: WriteRow,
  where: SqlFragment,
  dialect: Dialect,
  qd: QueryDialect,
): SqlFragment {
  const b = new SqlBuilder(dialect).append('UPDATE ').appendIdent(table.name).append(' SET ');
  entries(table, patch).forEach(([column, value], i) => {
    if (i > 0) b.append(', ');
    b.appendIdent(column.name)
      .append(' = ')
      .appendValue(driverValue(column, value, qd));
  });
  return b.appendFragment(where).build();
}

export function deleteStatement(table: TableInfo, where: SqlFragment, dialect: Dialect): SqlFragment {
  return new SqlBuilder(dialect).append('DELETE FROM ').appendIdent(table.name).appendFragment(where).build();
}

/** Every column of the rows an update will change, locked until the transaction ends. */
export function lockedRowsStatement(
  table: TableInfo,
  where: SqlFragment,
  dialect: Dialect,
  qd: QueryDialect,
): SqlFragment {
  const b = new SqlBuilder(dialect).append('SELECT ');
  appendColumnList(b, table.columns);
  return b.append(' FROM ').appendIdent(table.name).appendFragment(where).append(qd.forUpdate).build();
}

/** ` WHERE` restricted to exactly `rows` by primary key (no phantom rows); undefined without a key. */
export function keyedWhere(
  table: TableInfo,
  rows: readonly Row[],
  dialect: Dialect,
  qd: QueryDialect,
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
        .appendValue(driverValue(column, row[column.name], qd));
    });
    b.append(')');
  });
  return b.build();
}
