// Assembles a frozen SchemaSnapshot from introspected columns and primary keys (any database).

import type { ColumnInfo, SchemaSnapshot, TableInfo } from './adapter.js';
import { valueKindOf } from './value-kind.js';

export interface IntrospectedColumn extends Omit<ColumnInfo, 'valueKind'> {
  readonly table: string;
}

export interface IntrospectedKeyPart {
  readonly table: string;
  readonly column: string;
}

/**
 * Columns in ordinal order and key parts in key order; tables keep the order they first appear in.
 * The tables of `unserved` (name → why) are left out of `tables` and kept in `unserved`.
 */
export function buildSnapshot(
  columns: readonly IntrospectedColumn[],
  keyParts: readonly IntrospectedKeyPart[],
  unserved: ReadonlyMap<string, string> = new Map(),
): SchemaSnapshot {
  const columnsOf = new Map<string, ColumnInfo[]>();
  for (const { table, ...column } of columns) {
    if (unserved.has(table)) continue;
    const list = columnsOf.get(table) ?? [];
    list.push(Object.freeze({ ...column, valueKind: valueKindOf(column) }));
    columnsOf.set(table, list);
  }
  const keyOf = new Map<string, string[]>();
  for (const { table, column } of keyParts) keyOf.set(table, [...(keyOf.get(table) ?? []), column]);
  const tables = new Map<string, TableInfo>();
  for (const [name, cols] of columnsOf) {
    tables.set(
      name,
      Object.freeze({
        name,
        columns: Object.freeze(cols),
        columnsByName: new Map(cols.map((c) => [c.name, c])),
        primaryKey: Object.freeze(keyOf.get(name) ?? []),
      }),
    );
  }
  return Object.freeze({ tables, unserved });
}
