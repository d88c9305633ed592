// A validated value → what the driver binds for that column (JSON as text, zone-less MySQL times).

import type { ColumnInfo } from '../db/adapter.js';
import type { QueryDialect } from './query-dialect.js';

export function driverValue(column: ColumnInfo, value: unknown, qd: QueryDialect): unknown {
  if (value === null) return null;
  switch (column.valueKind) {
    case 'json':
      return JSON.stringify(value);
    case 'timestamp':
      return typeof value === 'string' ? qd.bindTimestamp(value) : value;
    default:
      return value;
  }
}
