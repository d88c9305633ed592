// fast-check arbitraries of column rules (docs/policy-language.md "Columns"), as the text stored in
// `auth_policies.columns`: every column (NULL or `*`), a list, or `* except (…)`, a name sometimes
// double-quoted. Shared by the differential property tests.

import fc from 'fast-check';

/**
 * A rule over `columns`, given the row's table name: names of `foreign` (columns the table lacks)
 * stay only on rows for table `all`, which ignore them; a list left empty becomes NULL.
 */
export const columnRuleArbitrary = (
  columns: readonly string[],
  foreign: readonly string[] = [],
): fc.Arbitrary<(tableName: string) => string | null> =>
  fc
    .tuple(
      fc.constantFrom('every', 'star', 'only', 'except', 'only', 'except'),
      fc.subarray([...columns, ...foreign], {
        minLength: 1,
        maxLength: Math.min(4, columns.length + foreign.length),
      }),
      fc.boolean(),
    )
    .map(([kind, names, quote]) => (tableName: string) => {
      const kept = names.filter((n) => tableName === 'all' || !foreign.includes(n));
      if (kind === 'every' || kept.length === 0) return null;
      if (kind === 'star') return '*';
      const list = kept.map((n, i) => (quote && i === 0 ? `"${n}"` : n)).join(', ');
      return kind === 'only' ? list : `* except (${list})`;
    });
