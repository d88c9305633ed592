// What a column's values are validated and bound as: derived once per column when a schema
// snapshot is built (build-snapshot.ts), read as `column.valueKind` on the request path.

import type { ColumnType } from '../../compiler/types.js';

export type ValueKind =
  'integer' | 'decimal' | 'boolean' | 'text' | 'json' | 'date' | 'timestamp' | 'time' | 'other';

/** The declared type decides for dates, times and JSON (SQLite keeps any declared name). */
export function valueKindOf(column: { readonly type: ColumnType; readonly dbType: string }): ValueKind {
  switch (column.type) {
    case 'integer':
    case 'decimal':
    case 'boolean':
      return column.type;
    case 'text':
    case 'other': {
      const t = column.dbType;
      if (/\bjsonb?\b/.test(t)) return 'json';
      if (/^date\b/.test(t)) return 'date';
      if (/^(timestamp|datetime)\b/.test(t)) return 'timestamp';
      if (/^time\b/.test(t)) return 'time';
      return column.type === 'text' ? 'text' : 'other';
    }
  }
}
