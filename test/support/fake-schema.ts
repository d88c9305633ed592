// Schema snapshots built by hand for unit tests, shaped like the adapters' introspection (with
// each column's value kind derived the same way, runtime/db/value-kind.ts).

import type { ColumnType } from '../../compiler/types.js';
import type { ColumnInfo, SchemaSnapshot, TableInfo } from '../../runtime/db/adapter.js';
import { valueKindOf } from '../../runtime/db/value-kind.js';

/** A column; the database type name defaults to the column type. */
export function fakeColumn(
  name: string,
  type: ColumnType,
  dbType: string = type,
  extra: Partial<Omit<ColumnInfo, 'name' | 'type' | 'dbType' | 'valueKind'>> = {},
): ColumnInfo {
  return {
    name,
    type,
    dbType,
    nullable: true,
    hasDefault: false,
    autoIncrement: false,
    ...extra,
    valueKind: valueKindOf({ type, dbType }),
  };
}

export interface FakeTableOptions {
  /** Columns the database fills when a row leaves them out. */
  readonly defaults?: readonly string[];
  readonly primaryKey?: readonly string[];
}

/** A table from `{column: type}` (nullable columns, `id` auto-increment and the primary key) or from columns. */
export function fakeTable(
  name: string,
  columns: Readonly<Record<string, ColumnType>> | readonly ColumnInfo[],
  options: FakeTableOptions = {},
): TableInfo {
  const infos: readonly ColumnInfo[] = Array.isArray(columns)
    ? columns
    : Object.entries(columns).map(([column, type]) =>
        fakeColumn(column, type, type, {
          hasDefault: (options.defaults ?? []).includes(column),
          autoIncrement: column === 'id',
        }),
      );
  return {
    name,
    columns: infos,
    columnsByName: new Map(infos.map((c) => [c.name, c])),
    primaryKey: options.primaryKey ?? ['id'],
  };
}

export const fakeSchema = (...tables: readonly TableInfo[]): SchemaSnapshot => ({
  tables: new Map(tables.map((t) => [t.name, t])),
});
