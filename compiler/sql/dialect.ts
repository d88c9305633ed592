// The small hooks in which the SQL dialects differ; everything else is shared compiler code.

import type { DialectName } from '../types.js';

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
  /** Wraps each side of a text comparison so it compares by code point, case- and space-sensitive. */
  readonly textCompare: { readonly open: string; readonly close: string };
  /**
   * `x [NOT] IN (SELECT …)` as a comparison with an array of the subquery's values, for callers
   * that ask for it (CompileOptions.arrayMembership): the text before the SELECT's column and after
   * its WHERE. Undefined in a dialect without arrays.
   */
  readonly arrayMembership?: { readonly in: string; readonly notIn: string; readonly close: string };
}

const quoteWith =
  (q: string) =>
  (name: string): string =>
    q + name.split(q).join(q + q) + q;

// PostgreSQL: `$n` placeholders; an explicit cast gives untyped parameters a type
// (https://www.postgresql.org/docs/current/sql-expressions.html#SQL-SYNTAX-TYPE-CASTS).
export const postgresDialect: Dialect = Object.freeze({
  name: 'postgres',
  quoteIdent: quoteWith('"'),
  placeholder: (index: number, cast?: string) => (cast === undefined ? `$${index}` : `$${index}::${cast}`),
  bindValue: (value: unknown) => value,
  trueSql: 'true',
  falseSql: 'false',
  // The database's default collation orders text by locale; "C" orders by byte (= code point in UTF-8).
  textCompare: { open: '(', close: ') COLLATE "C"' },
  // `= ANY` / `<> ALL` over an array have IN's and NOT IN's three-valued meaning, NULLs and the
  // empty array included; an uncorrelated ARRAY(SELECT …) is computed once per statement
  // (https://www.postgresql.org/docs/current/functions-comparisons.html#FUNCTIONS-COMPARISONS-ANY-SOME,
  // https://www.postgresql.org/docs/current/sql-expressions.html#SQL-SYNTAX-ARRAY-CONSTRUCTORS).
  arrayMembership: { in: ' = ANY (ARRAY(SELECT ', notIn: ' <> ALL (ARRAY(SELECT ', close: '))' },
});

// MySQL/MariaDB: `?` placeholders, backtick identifiers (ANSI_QUOTES is not assumed).
export const mysqlDialect: Dialect = Object.freeze({
  name: 'mysql',
  quoteIdent: quoteWith('`'),
  placeholder: () => '?',
  bindValue: (value: unknown) => value,
  trueSql: 'TRUE',
  falseSql: 'FALSE',
  // Default collations are case- and accent-insensitive and PAD SPACE; binary strings compare
  // byte by byte with trailing spaces significant
  // (https://mariadb.com/kb/en/binary/, https://dev.mysql.com/doc/refman/8.0/en/charset-binary-collations.html).
  textCompare: { open: 'CAST(', close: ' AS BINARY)' },
});

// SQLite: `?` placeholders; better-sqlite3 cannot bind booleans, so they become 1/0
// (https://www.sqlite.org/datatype3.html#boolean_datatype).
export const sqliteDialect: Dialect = Object.freeze({
  name: 'sqlite',
  quoteIdent: quoteWith('"'),
  placeholder: () => '?',
  bindValue: (value: unknown) => (typeof value === 'boolean' ? (value ? 1 : 0) : value),
  trueSql: '1',
  falseSql: '0',
  // The default BINARY collation compares with memcmp(): code point order for UTF-8.
  textCompare: { open: '', close: '' },
});

export const dialects: Readonly<Record<DialectName, Dialect>> = Object.freeze({
  postgres: postgresDialect,
  mysql: mysqlDialect,
  sqlite: sqliteDialect,
});
