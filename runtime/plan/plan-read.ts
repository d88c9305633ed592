// list / get / count requests → one SELECT against the schema: columns, WHERE, ORDER BY, page.

import type { Dialect } from '../../compiler/sql/dialect.js';
import { SqlBuilder, type SqlFragment } from '../../compiler/sql/fragment.js';
import { internalError } from '../../errors/rest-error.js';
import type { ColumnInfo, TableInfo } from '../db/adapter.js';
import type { OrderItem, ParsedRequest } from '../request/types.js';
import { columnOf, freeAlias, operandOf, selectedColumns } from './columns.js';
import { columnBuilder, type Masks } from './masked-columns.js';
import { whereClause } from './where.js';
import type { ReadColumns } from '../enforce/request-columns.js';

export type ReadRequest = Extract<ParsedRequest, { kind: 'list' | 'get' | 'count' }>;

export interface ReadPlan {
  /** `rows`: a JSON array; `row`: one object or 404; `count`: `{"count": N}` from column `count`. */
  readonly shape: 'rows' | 'row' | 'count';
  readonly statement: SqlFragment;
  /**
   * `rows` with `countAll`: the column each row carries the count of every row the filters and
   * policies let through (a window count, computed before the LIMIT), to be taken off the rows.
   */
  readonly totalColumn?: string;
}

/** The columns, a masked one as its masked value under its own name (plan/masked-columns.ts). */
export function appendColumnList(b: SqlBuilder, columns: readonly ColumnInfo[], masks?: Masks): void {
  columns.forEach((c, i) => {
    if (i > 0) b.append(', ');
    if (masks?.has(c.name) !== true) b.appendIdent(c.name);
    else
      b.appendFragment(columnBuilder(b.dialect, masks).appendIdent(c.name).build())
        .append(' AS ')
        .appendIdent(c.name);
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

/** A validated row limit as SQL text; anything but a safe integer ≥ 0 is a bug upstream. */
function integerLiteral(n: number): string {
  if (!Number.isSafeInteger(n) || n < 0) throw internalError(`limit ${String(n)} is not an integer ≥ 0`);
  return String(n);
}

export function planRead(
  request: ReadRequest,
  table: TableInfo,
  predicate: SqlFragment | undefined,
  dialect: Dialect,
  /** The caller's column rules: hidden columns are refused before this, masked ones masked. */
  columns?: ReadColumns,
): ReadPlan {
  const b = new SqlBuilder(dialect);
  const key = request.kind === 'get' ? request.key : undefined;
  const masks = columns?.masks;
  const where = whereClause(
    { table, key, filters: request.filters, predicate, ...(masks === undefined ? {} : { masks }) },
    dialect,
  );
  if (request.kind === 'count') {
    b.append('SELECT COUNT(*) AS ')
      .appendIdent('count')
      .append(' FROM ')
      .appendIdent(table.name)
      .appendFragment(where);
    return { shape: 'count', statement: b.build() };
  }
  b.append('SELECT ');
  appendColumnList(b, selectedColumns(table, request.select, columns?.hidden), masks);
  const totalColumn =
    request.kind === 'list' && request.countAll === true ? freeAlias(table, 'rest_total') : undefined;
  if (totalColumn !== undefined) b.append(', COUNT(*) OVER () AS ').appendIdent(totalColumn);
  b.append(' FROM ').appendIdent(table.name).appendFragment(where);
  if (request.kind === 'get') return { shape: 'row', statement: b.build() };
  const items = orderItems(table, request.order);
  if (items.length > 0) {
    const order = columnBuilder(dialect, masks);
    items.forEach((item, i) => {
      if (i > 0) order.append(', ');
      const column = columnOf(table, item.column, 'order');
      dialect.orderBy(
        order,
        item.column,
        item.direction,
        item.nulls ?? (item.direction === 'asc' ? 'last' : 'first'),
        operandOf(column, dialect),
      );
    });
    b.append(' ORDER BY ').appendFragment(order.build());
  }
  // The page size is written as a literal, so the plan of a prepared read knows how many rows it
  // needs: with `LIMIT $n` PostgreSQL's generic plan assumes 10% of the rows are wanted and may
  // walk the primary key through a filter instead of using the index of a policy's column
  // (BENCHMARKS.md, team membership). A first page has no OFFSET (a first-page read of a native
  // table then has no parameter at all, and PostgreSQL plans it once for good); later pages bind
  // theirs, so that paging through a table does not prepare one statement per page.
  const { limit, offset } = request.window;
  if (limit !== undefined) b.append(` LIMIT ${integerLiteral(limit)}`);
  else if (offset > 0 && dialect.unlimited !== '') b.append(` ${dialect.unlimited}`);
  if (offset > 0) b.append(' OFFSET ').appendValue(offset);
  return totalColumn === undefined
    ? { shape: 'rows', statement: b.build() }
    : { shape: 'rows', statement: b.build(), totalColumn };
}
