import { describe, expect, it } from 'vitest';
import type { ColumnType } from '../../../../compiler/types.js';
import { columnSchema } from '../../../../runtime/openapi/column-schemas.js';
import { fakeColumn } from '../../../support/fake-schema.js';

describe('columnSchema', () => {
  it.each<[string, ColumnType, string, boolean, Record<string, unknown>]>([
    ['integer', 'integer', 'integer', false, { type: 'integer' }],
    ['nullable integer', 'integer', 'int', true, { type: ['integer', 'null'] }],
    ['bigint (beyond 2^53 as a string)', 'integer', 'bigint', false, { type: ['integer', 'string'] }],
    ['nullable bigint', 'integer', 'bigint', true, { type: ['integer', 'string', 'null'] }],
    ['decimal', 'decimal', 'numeric(10,2)', true, { type: ['number', 'null'] }],
    ['boolean', 'boolean', 'boolean', false, { type: 'boolean' }],
    ['varchar(32)', 'text', 'varchar(32)', false, { type: 'string', maxLength: 32 }],
    [
      'character varying(5)',
      'text',
      'character varying(5)',
      true,
      { type: ['string', 'null'], maxLength: 5 },
    ],
    ['text', 'text', 'text', false, { type: 'string' }],
    ['date', 'text', 'date', true, { type: ['string', 'null'], format: 'date' }],
    ['timestamptz', 'other', 'timestamp with time zone', false, { type: 'string', format: 'date-time' }],
    ['datetime(3)', 'other', 'datetime(3)', false, { type: 'string', format: 'date-time' }],
    ['time', 'other', 'time without time zone', false, { type: 'string', format: 'time' }],
    ['jsonb (any JSON value)', 'other', 'jsonb', false, {}],
    ['another type, not null', 'other', 'uuid', false, { not: { type: 'null' } }],
    ['another type, nullable', 'other', 'uuid', true, {}],
  ])('%s', (_label, type, dbType, nullable, expected) => {
    expect(columnSchema(fakeColumn('c', type, dbType, { nullable }))).toEqual({
      ...expected,
      description: dbType,
    });
  });
});
