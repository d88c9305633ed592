// The few places where the SQL of table requests differs by database, as hooks per dialect
// (identifier quoting and placeholders live in compiler/sql/dialect.ts).

import type { SqlBuilder } from '../../compiler/sql/fragment.js';
import type { DialectName } from '../../compiler/types.js';

export interface QueryDialect {
  /** `column = value` / `<>`, exact: case-, accent- and trailing-space-sensitive. */
  textCompare(b: SqlBuilder, column: string, op: '=' | '<>', value: unknown): void;
  /** `column IN (values)` with the same exactness; `values` is not empty. */
  textIn(b: SqlBuilder, column: string, values: readonly unknown[]): void;
  /** Case-sensitive match; `pattern` uses `*` as the only wildcard. */
  like(b: SqlBuilder, column: string, pattern: string): void;
  /** Case-insensitive match; `pattern` uses `*` as the only wildcard. */
  ilike(b: SqlBuilder, column: string, pattern: string): void;
  orderBy(b: SqlBuilder, column: string, direction: 'asc' | 'desc', nulls: 'first' | 'last'): void;
  /** Row locks for a read-then-write inside a transaction. */
  readonly forUpdate: string;
  /** An INSERT that gives every column its default. */
  readonly insertDefaults: string;
  /** A validated ISO-8601 timestamp as the driver should bind it. */
  bindTimestamp(text: string): unknown;
  /**
   * A write's policy check can fail inside its own statement (plan-write.ts `raising`): then a
   * single-row create or an update with a check is one statement, not a transaction of several.
   */
  readonly checkInStatement: boolean;
}

/** `*` → `%`; `%`, `_` and the escape character itself are literal (escaped with `!`). */
export const likePattern = (pattern: string): string => pattern.replace(/[!%_]/g, '!$&').replaceAll('*', '%');

/** GLOB is SQLite's case-sensitive LIKE: `*` is already its wildcard; `?` and `[` must be literal. */
export const globPattern = (pattern: string): string => pattern.replace(/[?[]/g, '[$&]');

function plainCompare(b: SqlBuilder, column: string, op: '=' | '<>', value: unknown): void {
  b.appendIdent(column).append(` ${op} `).appendValue(value);
}

function plainIn(b: SqlBuilder, column: string, values: readonly unknown[]): void {
  b.appendIdent(column).append(' IN (');
  values.forEach((v, i) => {
    if (i > 0) b.append(', ');
    b.appendValue(v);
  });
  b.append(')');
}

const PG_NULLS = { first: ' NULLS FIRST', last: ' NULLS LAST' } as const;

function nativeOrderBy(
  b: SqlBuilder,
  column: string,
  direction: 'asc' | 'desc',
  nulls: 'first' | 'last',
): void {
  b.appendIdent(column)
    .append(direction === 'asc' ? ' ASC' : ' DESC')
    .append(PG_NULLS[nulls]);
}

const postgres: QueryDialect = {
  textCompare: plainCompare,
  textIn: plainIn,
  like: (b, column, pattern) =>
    void b.appendIdent(column).append(' LIKE ').appendValue(likePattern(pattern)).append(" ESCAPE '!'"),
  ilike: (b, column, pattern) =>
    void b.appendIdent(column).append(' ILIKE ').appendValue(likePattern(pattern)).append(" ESCAPE '!'"),
  orderBy: nativeOrderBy,
  forUpdate: ' FOR UPDATE',
  insertDefaults: ' DEFAULT VALUES',
  bindTimestamp: (text) => text,
  checkInStatement: true,
};

// MySQL/MariaDB: default collations are case- and accent-insensitive and PAD SPACE, so exact
// comparisons go through binary strings; the collation comparison in front keeps indexes usable
// (https://mariadb.com/kb/en/binary/). No NULLS FIRST/LAST: `col IS NULL` sorts first
// (https://dev.mysql.com/doc/refman/8.0/en/sorting-rows.html).
const binary = (b: SqlBuilder, emit: () => void): void => {
  b.append('CAST(');
  emit();
  b.append(' AS BINARY)');
};

const mysql: QueryDialect = {
  textCompare: (b, column, op, value) => {
    if (op === '=') b.appendIdent(column).append(' = ').appendValue(value).append(' AND ');
    binary(b, () => b.appendIdent(column));
    b.append(` ${op} `);
    binary(b, () => b.appendValue(value));
  },
  textIn: (b, column, values) => {
    b.append('(');
    plainIn(b, column, values);
    b.append(' AND ');
    binary(b, () => b.appendIdent(column));
    b.append(' IN (');
    values.forEach((v, i) => {
      if (i > 0) b.append(', ');
      binary(b, () => b.appendValue(v));
    });
    b.append('))');
  },
  like: (b, column, pattern) => {
    binary(b, () => b.appendIdent(column));
    b.append(' LIKE ');
    binary(b, () => b.appendValue(likePattern(pattern)));
    b.append(" ESCAPE '!'");
  },
  ilike: (b, column, pattern) => {
    binary(b, () => b.append('LOWER(').appendIdent(column).append(')'));
    b.append(' LIKE ');
    binary(b, () => b.append('LOWER(').appendValue(likePattern(pattern)).append(')'));
    b.append(" ESCAPE '!'");
  },
  orderBy: (b, column, direction, nulls) => {
    b.appendIdent(column).append(nulls === 'first' ? ' IS NULL DESC, ' : ' IS NULL ASC, ');
    b.appendIdent(column).append(direction === 'asc' ? ' ASC' : ' DESC');
  },
  forUpdate: ' FOR UPDATE',
  insertDefaults: ' () VALUES ()',
  bindTimestamp: mysqlDatetime,
  checkInStatement: false,
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

// SQLite: LIKE ignores ASCII case only (https://www.sqlite.org/lang_expr.html#like); GLOB is the
// case-sensitive match. NULLS FIRST/LAST exist since 3.30. Writes are serialised by the adapter,
// so no row locks.
const sqlite: QueryDialect = {
  textCompare: plainCompare,
  textIn: plainIn,
  like: (b, column, pattern) => void b.appendIdent(column).append(' GLOB ').appendValue(globPattern(pattern)),
  ilike: (b, column, pattern) =>
    void b.appendIdent(column).append(' LIKE ').appendValue(likePattern(pattern)).append(" ESCAPE '!'"),
  orderBy: nativeOrderBy,
  forUpdate: '',
  insertDefaults: ' DEFAULT VALUES',
  bindTimestamp: (text) => text,
  checkInStatement: false,
};

export const queryDialects: Readonly<Record<DialectName, QueryDialect>> = { postgres, mysql, sqlite };
