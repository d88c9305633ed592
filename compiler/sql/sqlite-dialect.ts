// SQLite's hooks (dialect.ts): `?` placeholders, double-quoted identifiers, booleans bound as 1/0,
// GLOB as the case-sensitive match, no row locks.

import type { Dialect, SqlWriter } from './dialect.js';
import { likeWith, orderWithNulls, plainCompare, plainIn, quoteWith } from './standard-sql.js';

/** GLOB is SQLite's case-sensitive LIKE: `*` is already its wildcard; `?` and `[` must be literal. */
export const globPattern = (pattern: string): string => pattern.replace(/[?[]/g, '[$&]');

/**
 * A validated timestamp as SQLite's date functions read it: a zone written `+HH` or `+HHMM` is
 * written `+HH:MM`, the one offset form they accept (https://www.sqlite.org/lang_datefunc.html).
 */
export function sqliteTimestamp(text: string): string {
  return text.replace(/([+-])([0-9]{2}):?([0-9]{2})?$/, (zone, sign: string, hh: string, mm?: string) =>
    text.length - zone.length > 10 ? `${sign}${hh}:${mm ?? '00'}` : zone,
  );
}

export const sqliteDialect: Dialect = Object.freeze({
  name: 'sqlite',
  quoteIdent: quoteWith('"'),
  placeholder: () => '?',
  // better-sqlite3 cannot bind booleans (https://www.sqlite.org/datatype3.html#boolean_datatype).
  bindValue: (value: unknown) => (typeof value === 'boolean' ? (value ? 1 : 0) : value),
  trueSql: '1',
  falseSql: '0',
  // The default BINARY collation compares with memcmp(): code point order for UTF-8.
  codePointText: { open: '', close: '' },
  textCompare: plainCompare,
  textIn: plainIn,
  // LIKE ignores ASCII case only (https://www.sqlite.org/lang_expr.html#like); GLOB is the
  // case-sensitive match.
  like: (w: SqlWriter, column: string, pattern: string) =>
    void w.appendIdent(column).append(' GLOB ').appendValue(globPattern(pattern)),
  ilike: likeWith('LIKE'),
  // NULLS FIRST/LAST exist since 3.30 (https://www.sqlite.org/releaselog/3_30_0.html).
  orderBy: orderWithNulls,
  // No row locks and no FOR UPDATE: the adapter's BEGIN IMMEDIATE already holds the database's
  // one write lock for the transaction (https://www.sqlite.org/lang_transaction.html).
  forUpdate: '',
  // A negative LIMIT is no limit (https://www.sqlite.org/lang_select.html#limitoffset).
  unlimited: 'LIMIT -1',
  insertDefaults: ' DEFAULT VALUES',
  bindTimestamp: sqliteTimestamp,
  // SQLite keeps timestamps as the text written (`2021-01-01 00:00:00`, `2021-01-01T00:00:00`,
  // with or without a zone): compared as text, equal instants differ. julianday() reads every
  // such form as the same instant (zones converted to UTC; precision: the millisecond)
  // (https://www.sqlite.org/lang_datefunc.html).
  timestampOperand: { open: 'julianday(', close: ')' },
  // Division by zero is NULL in SQLite: a failed check cannot end the statement.
  checkInStatement: false,
  // No `DEFAULT` in a VALUES list, and RETURNING's order is not the VALUES order
  // (https://www.sqlite.org/lang_returning.html); in-process, a statement per row costs no round trip.
  manyRowInsert: false,
});
