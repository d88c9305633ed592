// Every column name of a request is looked up in the schema here; unknown → 400.

import { PLAIN_OPERAND, type Dialect, type Operand } from '../../compiler/sql/dialect.js';
import { RestError } from '../../errors/rest-error.js';
import type { ColumnInfo, TableInfo } from '../db/adapter.js';
import { isSecretColumn } from '../auth/secret-columns.js';
import type { Select } from '../request/types.js';

export type ColumnUse = 'filter' | 'select' | 'order' | 'body';

/**
 * Secret columns (the password hash, docs/http-api.md) read as unknown columns anywhere a request can
 * read them; they stay writable (`body`) because the auth table guards hash and derive them.
 */
export function columnOf(table: TableInfo, name: string, use: ColumnUse): ColumnInfo {
  const column = table.columnsByName.get(name);
  if (column === undefined || (use !== 'body' && isSecretColumn(table.name, name))) {
    throw new RestError('unknown_column', `table ${table.name} has no column ${name} (in ${use})`, {
      details: { column: name, in: use },
    });
  }
  return column;
}

/**
 * What wraps `column` (and the values it is compared with) in comparisons and ORDER BY: a
 * timestamp as the dialect compares instants (dialect.ts `timestampOperand`), else nothing.
 */
export const operandOf = (column: ColumnInfo, dialect: Dialect): Operand =>
  column.valueKind === 'timestamp' ? dialect.timestampOperand : PLAIN_OPERAND;

/** `wanted`, or it with underscores in front: a column alias no column of `table` has. */
export function freeAlias(table: TableInfo, wanted: string): string {
  let name = wanted;
  while (table.columnsByName.has(name)) name = `_${name}`;
  return name;
}

/** `select`'s columns; `*` is every column but the secret ones and those `hidden` from the caller. */
export function selectedColumns(
  table: TableInfo,
  select: Select,
  hidden?: ReadonlySet<string>,
): readonly ColumnInfo[] {
  return select === undefined
    ? table.columns.filter((c) => !isSecretColumn(table.name, c.name) && hidden?.has(c.name) !== true)
    : select.map((name) => columnOf(table, name, 'select'));
}

/** The name of a table's single-column primary key, or why it has none (`has no primary key`, …). */
export function singleKeyOf(table: TableInfo): { readonly name: string } | { readonly why: string } {
  const [name, ...rest] = table.primaryKey;
  if (name === undefined) return { why: 'has no primary key' };
  return rest.length > 0 ? { why: 'has a composite primary key' } : { name };
}

/** The single-column primary key that `/<table>/<key>` addresses. */
export function keyColumn(table: TableInfo): ColumnInfo {
  const key = singleKeyOf(table);
  if ('why' in key) {
    const { why } = key;
    throw new RestError(
      'unsupported_key',
      `table ${table.name} ${why}; address its rows with filters instead of /${table.name}/<key>`,
    );
  }
  return columnOf(table, key.name, 'filter');
}
