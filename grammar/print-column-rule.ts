// A column rule → its canonical text (docs/policy-language.md): `*`, `a, b` or `* except (a, b)`,
// names double-quoted only when they must be (not an identifier, or the keyword `except`).
// parseColumnRule(printColumnRule(r)) equals r, positions aside.

import type { ColumnRule } from './column-rule.js';

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A column name as the rule must write it. */
export const printColumnName = (name: string): string =>
  IDENTIFIER.test(name) && name.toLowerCase() !== 'except' ? name : `"${name.replaceAll('"', '""')}"`;

export function printColumnRule(rule: ColumnRule): string {
  switch (rule.kind) {
    case 'all':
      return '*';
    case 'only':
      return rule.columns.map((c) => printColumnName(c.name)).join(', ');
    case 'except':
      return `* except (${rule.columns.map((c) => printColumnName(c.name)).join(', ')})`;
  }
}
