// MySQL/MariaDB's hooks (dialect.ts): `?` placeholders, backtick identifiers (ANSI_QUOTES is not
// assumed), exact text through binary strings, NULLs ordered by `IS NULL`, zone-less DATETIME
// values.

import { PLAIN_OPERAND, type Dialect, type Operand, type SqlWriter } from './dialect.js';
import { likePattern, plainIn, quoteWith } from './standard-sql.js';

// Default collations are case- and accent-insensitive and PAD SPACE; binary strings compare byte
// by byte with trailing spaces significant (https://mariadb.com/kb/en/binary/,
// https://dev.mysql.com/doc/refman/8.0/en/charset-binary-collations.html).
const binary = (w: SqlWriter, emit: () => void): void => {
  w.append('CAST(');
  emit();
  w.append(' AS BINARY)');
};

/** MySQL DATETIME literals take no zone: a timestamp with an offset is converted to UTC. */
function mysqlDatetime(text: string): string {
  const normalized = text.replace(' ', 'T');
  if (!/(Z|[+-][0-9]{2}(:?[0-9]{2})?)$/i.test(normalized) || normalized.length <= 10) {
    return normalized.replace('T', ' ');
  }
  const fraction = /\.([0-9]+)/.exec(normalized)?.[1] ?? '';
  const iso = new Date(normalized).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${fraction === '' ? '' : `.${fraction.slice(0, 6)}`}`;
}

export const mysqlDialect: Dialect = Object.freeze({
  name: 'mysql',
  quoteIdent: quoteWith('`'),
  placeholder: () => '?',
  bindValue: (value: unknown) => value,
  trueSql: 'TRUE',
  falseSql: 'FALSE',
  codePointText: { open: 'CAST(', close: ' AS BINARY)' },
  // Filters: the collation comparison in front keeps indexes usable; the binary one makes it exact.
  textCompare: (w: SqlWriter, column: string, op: '=' | '<>', value: unknown) => {
    if (op === '=') w.appendIdent(column).append(' = ').appendValue(value).append(' AND ');
    binary(w, () => w.appendIdent(column));
    w.append(` ${op} `);
    binary(w, () => w.appendValue(value));
  },
  textIn: (w: SqlWriter, column: string, values: readonly unknown[]) => {
    w.append('(');
    plainIn(w, column, values);
    w.append(' AND ');
    binary(w, () => w.appendIdent(column));
    w.append(' IN (');
    values.forEach((v, i) => {
      if (i > 0) w.append(', ');
      binary(w, () => w.appendValue(v));
    });
    w.append('))');
  },
  like: (w: SqlWriter, column: string, pattern: string) => {
    binary(w, () => w.appendIdent(column));
    w.append(' LIKE ');
    binary(w, () => w.appendValue(likePattern(pattern)));
    w.append(" ESCAPE '!'");
  },
  ilike: (w: SqlWriter, column: string, pattern: string) => {
    binary(w, () => w.append('LOWER(').appendIdent(column).append(')'));
    w.append(' LIKE ');
    binary(w, () => w.append('LOWER(').appendValue(likePattern(pattern)).append(')'));
    w.append(" ESCAPE '!'");
  },
  // No NULLS FIRST/LAST: `col IS NULL` sorts first (https://dev.mysql.com/doc/refman/8.0/en/sorting-rows.html).
  orderBy: (
    w: SqlWriter,
    column: string,
    direction: 'asc' | 'desc',
    nulls: 'first' | 'last',
    { open, close }: Operand = PLAIN_OPERAND,
  ) => {
    w.appendIdent(column).append(nulls === 'first' ? ' IS NULL DESC, ' : ' IS NULL ASC, ');
    w.append(open)
      .appendIdent(column)
      .append(close)
      .append(direction === 'asc' ? ' ASC' : ' DESC');
  },
  // https://mariadb.com/kb/en/for-update/
  forUpdate: ' FOR UPDATE',
  // An OFFSET needs a LIMIT: the manual's "all rows" is the largest BIGINT UNSIGNED
  // (https://dev.mysql.com/doc/refman/8.0/en/select.html#select-limit).
  unlimited: 'LIMIT 18446744073709551615',
  insertDefaults: ' () VALUES ()',
  bindTimestamp: mysqlDatetime,
  // DATETIME and TIMESTAMP compare as instants.
  timestampOperand: PLAIN_OPERAND,
  checkInStatement: false,
  // MySQL has no RETURNING, and a several-row create that must be checked is a transaction anyway.
  manyRowInsert: false,
});
