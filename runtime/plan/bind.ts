// A validated value → what the driver binds for that column (JSON as text, zone-less MySQL times).

import type { Dialect } from '../../compiler/sql/dialect.js';
import type { ColumnInfo } from '../db/adapter.js';

export function driverValue(column: ColumnInfo, value: unknown, dialect: Dialect): unknown {
  if (value === null) return null;
  switch (column.valueKind) {
    case 'json':
      return JSON.stringify(value);
    case 'timestamp':
      return typeof value === 'string' ? dialect.bindTimestamp(value) : value;
    default:
      return value;
  }
}
