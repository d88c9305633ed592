// What differs between the SQL of the databases, as one interface of small hooks: one object per
// database (postgres-dialect.ts, mysql-dialect.ts, sqlite-dialect.ts, gathered in dialects.ts),
// shared by the policy compiler and the runtime's table requests. Everything else is shared code.
// The hooks are pure: they return text, or write through a SqlWriter.

import type { DialectName } from '../types.js';

/**
 * The sinks a hook writes through, as SqlBuilder (fragment.ts) implements them: text, an
 * identifier (quoted by the dialect) and a bound value. A hook never sees the builder itself.
 */
export interface SqlWriter {
  append(text: string): this;
  appendIdent(name: string): this;
  appendValue(value: unknown, cast?: string): this;
}

/** What wraps a column (or a value) where it is compared or ordered: `open` + it + `close`. */
export interface Operand {
  readonly open: string;
  readonly close: string;
}

/** The column itself. */
export const PLAIN_OPERAND: Operand = Object.freeze({ open: '', close: '' });

export interface Dialect {
  readonly name: DialectName;
  /** Quotes an identifier (already checked against the schema). */
  quoteIdent(name: string): string;
  /** The placeholder of the n-th (1-based) bound value, with an optional type cast. */
  placeholder(index: number, cast?: string): string;
  /** Converts a JS value into what the driver binds (e.g. booleans for SQLite). */
  bindValue(value: unknown): unknown;
  /** SQL text for a boolean constant. */
  readonly trueSql: string;
  readonly falseSql: string;
  /**
   * Policies: wraps each side of a text comparison so it compares by code point, case- and
   * space-sensitive.
   */
  readonly codePointText: { readonly open: string; readonly close: string };
  /**
   * Policies: `x [NOT] IN (SELECT …)` as a comparison with an array of the subquery's values, for
   * callers that ask for it (CompileOptions.arrayMembership): the text before the SELECT's column
   * and after its WHERE. Undefined in a dialect without arrays.
   */
  readonly arrayMembership?: { readonly in: string; readonly notIn: string; readonly close: string };

  /** Table requests: `column = value` / `<>`, exact: case-, accent- and trailing-space-sensitive. */
  textCompare(w: SqlWriter, column: string, op: '=' | '<>', value: unknown): void;
  /** `column IN (values)` with the same exactness; `values` is not empty. */
  textIn(w: SqlWriter, column: string, values: readonly unknown[]): void;
  /** Case-sensitive match; `pattern` uses `*` as the only wildcard. */
  like(w: SqlWriter, column: string, pattern: string): void;
  /** Case-insensitive match; `pattern` uses `*` as the only wildcard. */
  ilike(w: SqlWriter, column: string, pattern: string): void;
  /** `operand` wraps the column as in comparisons (`timestampOperand`); none: the column itself. */
  orderBy(
    w: SqlWriter,
    column: string,
    direction: 'asc' | 'desc',
    nulls: 'first' | 'last',
    operand?: Operand,
  ): void;
  /** Row locks for a read-then-write inside a transaction (appended to the SELECT). */
  readonly forUpdate: string;
  /** What comes before an OFFSET that has no LIMIT (empty where OFFSET stands alone). */
  readonly unlimited: string;
  /** An INSERT that gives every column its default (appended to `INSERT INTO t`). */
  readonly insertDefaults: string;
  /** A validated ISO-8601 timestamp as the driver should bind it. */
  bindTimestamp(text: string): unknown;
  /**
   * Table requests: what wraps both sides of a comparison of a timestamp column with a value, so
   * that equal instants compare equal whatever text form the column holds them in.
   */
  readonly timestampOperand: Operand;
  /**
   * A write's policy check can fail inside its own statement (plan-write.ts `raising`): then a
   * single-row create or an update with a check is one statement, not a transaction of several.
   */
  readonly checkInStatement: boolean;
  /**
   * One INSERT stores several rows that set different columns (`DEFAULT` in its VALUES list) and
   * its RETURNING hands them back in the order of that list: a several-row create is then one
   * statement like a single-row one.
   */
  readonly manyRowInsert: boolean;
}
