// JSON Schema (OpenAPI 3.1's dialect, draft 2020-12) of a column's values as the API answers and
// accepts them (docs/http-api.md "Types"): one text form per type, the same on every database.

import type { ColumnInfo } from '../db/adapter.js';

export type JsonSchema = Readonly<Record<string, unknown>>;

/** `varchar(n)`, `character varying(n)`, `char(n)`, `nvarchar(n)`: the most characters a value has. */
const LENGTH = /^(?:n?var)?char(?:acter)?(?: varying)?\s*\(\s*(\d+)\s*\)/i;
/** Integer types wider than 32 bits: values beyond ±2^53 are answered as decimal strings. */
const WIDE_INTEGER = /^(?:bigint|int8|bigserial|serial8)\b/i;

function typed(type: string, nullable: boolean, extra: Record<string, unknown> = {}): JsonSchema {
  return { type: nullable ? [type, 'null'] : type, ...extra };
}

/** The schema of one column's values; `description` names the database's own type. */
export function columnSchema(column: ColumnInfo): JsonSchema {
  const { nullable, dbType } = column;
  const description = { description: dbType };
  switch (column.valueKind) {
    case 'integer':
      return WIDE_INTEGER.test(dbType)
        ? { type: nullable ? ['integer', 'string', 'null'] : ['integer', 'string'], ...description }
        : typed('integer', nullable, description);
    case 'decimal':
      return typed('number', nullable, description);
    case 'boolean':
      return typed('boolean', nullable, description);
    case 'date':
      return typed('string', nullable, { format: 'date', ...description });
    case 'timestamp':
      return typed('string', nullable, { format: 'date-time', ...description });
    case 'time':
      return typed('string', nullable, { format: 'time', ...description });
    case 'text': {
      const length = LENGTH.exec(dbType)?.[1];
      return typed('string', nullable, {
        ...(length === undefined ? {} : { maxLength: Number(length) }),
        ...description,
      });
    }
    case 'json':
      // Any JSON value, null included: the column holds a document.
      return description;
    case 'other':
      return nullable ? description : { not: { type: 'null' }, ...description };
  }
}
