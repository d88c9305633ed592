// Masked columns in SQL (docs/policy-language.md): where a column rule masks column `c`, every
// place a request's statement reads `c` — the SELECT list, RETURNING, filters and ORDER BY —
// reads `(CASE WHEN (<mask>) THEN c END)` instead, so the answer, the filters and the order all
// see the same masked value and a filter is never an oracle. The planners write column names
// through a builder; a masking builder writes the masked expression for a masked name.

import type { Dialect } from '../../compiler/sql/dialect.js';
import { SqlBuilder, type SqlFragment } from '../../compiler/sql/fragment.js';

/** Per masked column, the condition under which its value shows. */
export type Masks = ReadonlyMap<string, SqlFragment>;

class MaskingSqlBuilder extends SqlBuilder {
  readonly #masks: Masks;

  constructor(dialect: Dialect, masks: Masks) {
    super(dialect);
    this.#masks = masks;
  }

  override appendIdent(name: string): this {
    const mask = this.#masks.get(name);
    if (mask === undefined) return super.appendIdent(name);
    return this.append('(CASE WHEN (')
      .appendFragment(mask)
      .append(') THEN ')
      .append(this.dialect.quoteIdent(name))
      .append(' END)');
  }
}

/**
 * A builder for the parts of a statement that name the table's columns (never its table name):
 * a plain one when nothing is masked, so reads without column rules cost nothing extra.
 */
export const columnBuilder = (dialect: Dialect, masks: Masks | undefined): SqlBuilder =>
  masks === undefined || masks.size === 0 ? new SqlBuilder(dialect) : new MaskingSqlBuilder(dialect, masks);
