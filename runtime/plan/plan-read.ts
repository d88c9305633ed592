// list / get / count requests → one SELECT against the schema: columns, WHERE, ORDER BY, page.

import type { Dialect } from '../../compiler/sql/dialect.js';
import { SqlBuilder, type SqlFragment } from '../../compiler/sql/fragment.js';
import type { ColumnInfo, TableInfo } from '../db/adapter.js';
import type { OrderItem, ParsedRequest } from '../request/types.js';
import { columnOf, selectedColumns } from './columns.js';
import { whereClause } from './where.js';

export type ReadRequest = Extract<ParsedRequest, { kind: 'list' | 'get' | 'count' }>;

export interface ReadPlan {
  /** `rows`: a JSON array; `row`: one object or 404; `count`: `{"count": N}` from column `count`. */
  readonly shape: 'rows' | 'row' | 'count';
  readonly statement: SqlFragment;
}

export function appendColumnList(b: SqlBuilder, columns: readonly ColumnInfo[]): void {
  columns.forEach((c, i) => {
    if (i > 0) b.append(', ');
    b.appendIdent(c.name);
  });
}

/** The requested order, then the primary key so that pages are stable. */
function orderItems(table: TableInfo, order: readonly OrderItem[]): readonly OrderItem[] {
  const checked = order.map((o): OrderItem => ({ ...o, column: columnOf(table, o.column, 'order').name }));
  const named = new Set(checked.map((o) => o.column));
  const tiebreak = table.primaryKey
    .filter((c) => !named.has(c))
    .map((column): OrderItem => ({ column, direction: 'asc' }));
  return [...checked, ...tiebreak];
}

export function planRead(
  request: ReadRequest,
  table: TableInfo,
  predicate: SqlFragment | undefined,
  dialect: Dialect,
): ReadPlan {
  const b = new SqlBuilder(dialect);
  const key = request.kind === 'get' ? request.key : undefined;
  const where = whereClause({ table, key, filters: request.filters, predicate }, dialect);
  if (request.kind === 'count') {
    b.append('SELECT COUNT(*) AS ')
      .appendIdent('count')
      .append(' FROM ')
      .appendIdent(table.name)
      .appendFragment(where);
    return { shape: 'count', statement: b.build() };
  }
  b.append('SELECT ');
  appendColumnList(b, selectedColumns(table, request.select));
  b.append(' FROM ').appendIdent(table.name).appendFragment(where);
  if (request.kind === 'get') return { shape: 'row', statement: b.build() };
  const items = orderItems(table, request.order);
  if (items.length > 0) {
    b.append(' ORDER BY ');
    items.forEach((item, i) => {
      if (i > 0) b.append(', ');
      dialect.orderBy(
        b,
        item.column,
        item.direction,
        item.nulls ?? (item.direction === 'asc' ? 'last' : 'first'),
      );
    });
  }
  b.append(' LIMIT ').appendValue(request.page.size);
  b.append(' OFFSET ').appendValue((request.page.number - 1) * request.page.size);
  return { shape: 'rows', statement: b.build() };
}
