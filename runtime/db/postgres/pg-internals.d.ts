// Types for the two modules of pg's own package (exported as `pg/lib/*`) that one-sync.ts uses to
// parse rows and bind values exactly as pg's Query does; pg ships no declarations for them.

declare module 'pg/lib/result.js' {
  import type pg from 'pg';

  // The module is `module.exports = Result` (CommonJS), which Node's ESM import sees as its default.
  // eslint-disable-next-line no-restricted-syntax -- describes a CommonJS module's default export
  export default class Result {
    constructor(rowMode: 'array' | undefined, types: pg.CustomTypesConfig);
    addFields(fields: unknown[]): void;
    parseRow(fields: unknown[]): Record<string, unknown>;
    addRow(row: Record<string, unknown>): void;
    addCommandComplete(message: unknown): void;
  }
}

declare module 'pg/lib/utils.js' {
  /** A JS value as pg binds it in text format (Dates, Buffers, arrays, objects as JSON). */
  export function prepareValue(value: unknown): unknown;
}
