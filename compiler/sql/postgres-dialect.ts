// PostgreSQL's hooks (dialect.ts): `$n` placeholders with casts, double-quoted identifiers,
// arrays for uncorrelated IN subqueries, ILIKE, NULLS FIRST/LAST and RETURNING.

import { PLAIN_OPERAND, type Dialect } from './dialect.js';
import { likeWith, orderWithNulls, plainCompare, plainIn, quoteWith } from './standard-sql.js';

export const postgresDialect: Dialect = Object.freeze({
  name: 'postgres',
  quoteIdent: quoteWith('"'),
  // An explicit cast gives untyped parameters a type
  // (https://www.postgresql.org/docs/current/sql-expressions.html#SQL-SYNTAX-TYPE-CASTS).
  placeholder: (index: number, cast?: string) => (cast === undefined ? `$${index}` : `$${index}::${cast}`),
  bindValue: (value: unknown) => value,
  trueSql: 'true',
  falseSql: 'false',
  // The database's default collation orders text by locale; "C" orders by byte (= code point in UTF-8).
  codePointText: { open: '(', close: ') COLLATE "C"' },
  // `= ANY` / `<> ALL` over an array have IN's and NOT IN's three-valued meaning, NULLs and the
  // empty array included; an uncorrelated ARRAY(SELECT …) is computed once per statement
  // (https://www.postgresql.org/docs/current/functions-comparisons.html#FUNCTIONS-COMPARISONS-ANY-SOME,
  // https://www.postgresql.org/docs/current/sql-expressions.html#SQL-SYNTAX-ARRAY-CONSTRUCTORS).
  arrayMembership: { in: ' = ANY (ARRAY(SELECT ', notIn: ' <> ALL (ARRAY(SELECT ', close: '))' },
  // Equality under a deterministic collation is byte equality: filters need no COLLATE, and
  // their indexes stay usable (https://www.postgresql.org/docs/current/collation.html#COLLATION-NONDETERMINISTIC).
  textCompare: plainCompare,
  textIn: plainIn,
  like: likeWith('LIKE'),
  ilike: likeWith('ILIKE'),
  orderBy: orderWithNulls,
  forUpdate: ' FOR UPDATE',
  unlimited: '',
  insertDefaults: ' DEFAULT VALUES',
  bindTimestamp: (text: string) => text,
  // timestamp and timestamptz compare as instants.
  timestampOperand: PLAIN_OPERAND,
  // `1 / CASE WHEN … THEN 1 ELSE 0 END` fails its statement with division_by_zero.
  checkInStatement: true,
  // `DEFAULT` in a VALUES list: https://www.postgresql.org/docs/15/sql-insert.html; the rows of a
  // VALUES list are inserted, and returned, one after the other in its order.
  manyRowInsert: true,
});
