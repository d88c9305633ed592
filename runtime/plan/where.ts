// Filters, the addressed key and the policy predicate → one WHERE condition (AND of all).

import type { Dialect } from '../../compiler/sql/dialect.js';
import { SqlBuilder, type SqlFragment } from '../../compiler/sql/fragment.js';
import { RestError } from '../../errors/rest-error.js';
import type { ColumnInfo, TableInfo } from '../db/adapter.js';
import type { ColumnFilter, Filter } from '../request/types.js';
import { driverValue } from './bind.js';
import { coerceQueryValue } from './coerce-value.js';
import { columnOf, keyColumn, operandOf } from './columns.js';
import { columnBuilder, type Masks } from './masked-columns.js';

const SQL_COMPARISON = { eq: '=', neq: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;

function unsupported(column: ColumnInfo, message: string): RestError {
  return new RestError('invalid_filter', message, { details: { column: column.name } });
}

function value(column: ColumnInfo, text: string, dialect: Dialect): unknown {
  return driverValue(column, coerceQueryValue(column, text), dialect);
}

/**
 * `column <op> value` for a column of no text kind: a timestamp's both sides wrapped by the
 * dialect (SQLite compares instants, not the text it holds them in).
 */
function appendCompare(b: SqlBuilder, column: ColumnInfo, op: string, v: unknown): void {
  const { open, close } = operandOf(column, b.dialect);
  b.append(open).appendIdent(column.name).append(`${close} ${op} ${open}`).appendValue(v).append(close);
}

function appendPattern(b: SqlBuilder, column: ColumnInfo, op: 'like' | 'ilike', pattern: string): void {
  const name = column.name;
  if (column.valueKind !== 'text') throw unsupported(column, `${op} needs a text column; ${name} is not one`);
  coerceQueryValue(column, pattern);
  if (op === 'like') b.dialect.like(b, name, pattern);
  else b.dialect.ilike(b, name, pattern);
}

function appendColumnFilter(b: SqlBuilder, table: TableInfo, filter: ColumnFilter): void {
  const { dialect } = b;
  const column = columnOf(table, filter.column, 'filter');
  const kind = column.valueKind;
  const name = column.name;
  if (kind === 'json' && !(filter.kind === 'is' && filter.value === 'null')) {
    throw unsupported(column, `the JSON column ${name} can only be filtered with is.null`);
  }
  switch (filter.kind) {
    case 'compare': {
      const v = value(column, filter.value, dialect);
      if (kind === 'text' && (filter.op === 'eq' || filter.op === 'neq')) {
        dialect.textCompare(b, name, SQL_COMPARISON[filter.op] as '=' | '<>', v);
      } else {
        appendCompare(b, column, SQL_COMPARISON[filter.op], v);
      }
      return;
    }
    case 'pattern':
      appendPattern(b, column, filter.op, filter.pattern);
      return;
    case 'patterns': {
      // An empty set: no pattern matches (any), and every one does (all).
      if (filter.patterns.length === 0) {
        b.append(filter.quantifier === 'any' ? dialect.falseSql : dialect.trueSql);
        return;
      }
      b.append('(');
      filter.patterns.forEach((pattern, i) => {
        if (i > 0) b.append(filter.quantifier === 'any' ? ' OR ' : ' AND ');
        b.append('(');
        appendPattern(b, column, filter.op, pattern);
        b.append(')');
      });
      b.append(')');
      return;
    }
    case 'distinct': {
      // IS DISTINCT FROM a value: NULL, or different by the same exact comparison as neq.
      const v = value(column, filter.value, dialect);
      b.append('(').appendIdent(name).append(' IS NULL OR ');
      if (kind === 'text') dialect.textCompare(b, name, '<>', v);
      else appendCompare(b, column, '<>', v);
      b.append(')');
      return;
    }
    case 'in': {
      const values = filter.values.map((t) => value(column, t, dialect));
      if (values.length === 0) b.append(dialect.falseSql);
      else if (kind === 'text') dialect.textIn(b, name, values);
      else {
        const { open, close } = operandOf(column, dialect);
        b.append(open).appendIdent(name).append(`${close} IN (`);
        values.forEach((v, i) => {
          if (i > 0) b.append(', ');
          b.append(open).appendValue(v).append(close);
        });
        b.append(')');
      }
      return;
    }
    case 'is':
      if (filter.value === 'null') {
        b.appendIdent(name).append(' IS NULL');
        return;
      }
      if (kind !== 'boolean')
        throw unsupported(column, `is.${filter.value} needs a boolean column; ${name} is not one`);
      b.appendIdent(name).append(filter.value === 'true' ? ' IS TRUE' : ' IS FALSE');
      return;
  }
}

function appendFilter(b: SqlBuilder, table: TableInfo, filter: Filter): void {
  switch (filter.kind) {
    case 'not':
      b.append('NOT (');
      appendFilter(b, table, filter.filter);
      b.append(')');
      return;
    case 'logic':
      // An empty tree restricts nothing (and) or everything (or), as in SQL's identities.
      if (filter.items.length === 0) {
        b.append(filter.op === 'and' ? b.dialect.trueSql : b.dialect.falseSql);
        return;
      }
      b.append('(');
      filter.items.forEach((item, i) => {
        if (i > 0) b.append(filter.op === 'and' ? ' AND ' : ' OR ');
        b.append('(');
        appendFilter(b, table, item);
        b.append(')');
      });
      b.append(')');
      return;
    default:
      appendColumnFilter(b, table, filter);
  }
}

export interface WhereInput {
  readonly table: TableInfo;
  readonly key: string | undefined;
  readonly filters: readonly Filter[];
  readonly predicate: SqlFragment | undefined;
  /** Masked columns: filters see their masked values (plan/masked-columns.ts). */
  readonly masks?: Masks;
}

/** ` WHERE …` (with its leading space), or an empty fragment when nothing restricts the rows. */
export function whereClause(input: WhereInput, dialect: Dialect): SqlFragment {
  const conditions: SqlFragment[] = [];
  if (input.key !== undefined) {
    const b = new SqlBuilder(dialect);
    const column = keyColumn(input.table);
    const v = value(column, input.key, dialect);
    if (column.valueKind === 'text') dialect.textCompare(b, column.name, '=', v);
    else appendCompare(b, column, '=', v);
    conditions.push(b.build());
  }
  for (const filter of input.filters) {
    const b = columnBuilder(dialect, input.masks);
    appendFilter(b, input.table, filter);
    conditions.push(b.build());
  }
  if (input.predicate !== undefined) conditions.push(input.predicate);
  const b = new SqlBuilder(dialect);
  if (conditions.length === 0) return b.build();
  b.append(' WHERE ');
  conditions.forEach((c, i) => {
    if (i > 0) b.append(' AND ');
    b.append('(').appendFragment(c).append(')');
  });
  return b.build();
}
