// Hooks that several dialects write the same, standard-SQL way: identifiers in doubled quote
// characters, plain comparisons and IN lists, NULLS FIRST/LAST, and LIKE patterns with `!` as
// their escape character.

import { PLAIN_OPERAND, type Operand, type SqlWriter } from './dialect.js';

/** Quotes with `q`, doubling it inside the name. */
export const quoteWith =
  (q: string) =>
  (name: string): string =>
    q + name.split(q).join(q + q) + q;

/** `*` → `%`; `%`, `_` and the escape character itself are literal (escaped with `!`). */
export const likePattern = (pattern: string): string => pattern.replace(/[!%_]/g, '!$&').replaceAll('*', '%');

export function plainCompare(w: SqlWriter, column: string, op: '=' | '<>', value: unknown): void {
  w.appendIdent(column).append(` ${op} `).appendValue(value);
}

export function plainIn(w: SqlWriter, column: string, values: readonly unknown[]): void {
  w.appendIdent(column).append(' IN (');
  values.forEach((v, i) => {
    if (i > 0) w.append(', ');
    w.appendValue(v);
  });
  w.append(')');
}

/** `column LIKE|ILIKE pattern ESCAPE '!'`. */
export function likeWith(operator: 'LIKE' | 'ILIKE') {
  return (w: SqlWriter, column: string, pattern: string): void =>
    void w
      .appendIdent(column)
      .append(` ${operator} `)
      .appendValue(likePattern(pattern))
      .append(" ESCAPE '!'");
}

const NULLS = { first: ' NULLS FIRST', last: ' NULLS LAST' } as const;

export function orderWithNulls(
  w: SqlWriter,
  column: string,
  direction: 'asc' | 'desc',
  nulls: 'first' | 'last',
  { open, close }: Operand = PLAIN_OPERAND,
): void {
  w.append(open)
    .appendIdent(column)
    .append(close)
    .append(direction === 'asc' ? ' ASC' : ' DESC')
    .append(NULLS[nulls]);
}
