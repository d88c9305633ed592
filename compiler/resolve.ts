// Which policy rows decide a request on (table, action) — docs/policy-language.md — and a trace of why,
// which `rest policy explain` prints.

import type { Action, PolicyRow } from './types.js';

export type ResolutionLevel = 'table' | 'all' | 'none';

export interface CandidateTrace {
  readonly row: PolicyRow;
  readonly chosen: boolean;
  readonly reason: string;
}

export interface Resolution {
  readonly table: string;
  readonly action: Action;
  /** `table`: rows of this table decide; `all`: the fallback rows of `table_name = all`; `none`: deny. */
  readonly level: ResolutionLevel;
  /** The action the chosen rows carry: the request's own, or `all`. */
  readonly matchedAction: Action | 'all' | undefined;
  /** Chosen rows, combined with OR. Empty → deny. */
  readonly rows: readonly PolicyRow[];
  /** Every row for this table or `all`, with why it was or was not chosen. */
  readonly candidates: readonly CandidateTrace[];
  /** One sentence per step, for humans. */
  readonly steps: readonly string[];
}

const applies = (row: PolicyRow, action: Action): boolean => row.action === action || row.action === 'all';

export function resolvePolicies(rows: readonly PolicyRow[], table: string, action: Action): Resolution {
  const forTable = rows.filter((r) => r.table_name === table);
  const forAll = rows.filter((r) => r.table_name === 'all');
  const steps: string[] = [];

  const tableApplies = forTable.some((r) => applies(r, action));
  let level: ResolutionLevel;
  let levelRows: readonly PolicyRow[];
  if (tableApplies) {
    level = 'table';
    levelRows = forTable;
    steps.push(`level: table '${table}' has rows for action '${action}' or 'all'`);
  } else if (forAll.some((r) => applies(r, action))) {
    level = 'all';
    levelRows = forAll;
    steps.push(
      forTable.length === 0
        ? `level: no row for table '${table}'; falling back to table_name 'all'`
        : `level: the rows of table '${table}' are for other actions; falling back to table_name 'all'`,
    );
  } else {
    level = 'none';
    levelRows = [];
    steps.push(`level: no row for table '${table}' or 'all' covers action '${action}'`);
  }

  const exact = levelRows.filter((r) => r.action === action);
  const chosen = exact.length > 0 ? exact : levelRows.filter((r) => r.action === 'all');
  const matchedAction = level === 'none' ? undefined : exact.length > 0 ? action : 'all';
  if (level !== 'none') {
    steps.push(
      exact.length > 0
        ? `rows: ${exact.length} row(s) with action '${action}' (they beat action 'all')`
        : `rows: no row with action '${action}'; ${chosen.length} row(s) with action 'all'`,
    );
  }
  steps.push(
    chosen.length === 0
      ? 'decision: no chosen row, so the request is denied'
      : chosen.length === 1
        ? 'decision: the chosen row decides'
        : `decision: the ${chosen.length} chosen rows are combined with OR`,
  );

  const candidates = [...forTable, ...forAll].map((row): CandidateTrace => {
    if (chosen.includes(row))
      return { row, chosen: true, reason: `chosen (level ${level}, action ${row.action})` };
    if (!applies(row, action))
      return { row, chosen: false, reason: `action '${row.action}' does not cover '${action}'` };
    if (row.table_name !== (level === 'table' ? table : 'all')) {
      return { row, chosen: false, reason: `table_name '${row.table_name}' is not the deciding level` };
    }
    return { row, chosen: false, reason: `action '${action}' rows beat action 'all'` };
  });

  return Object.freeze({
    table,
    action,
    level,
    matchedAction,
    rows: Object.freeze(chosen),
    candidates: Object.freeze(candidates),
    steps: Object.freeze(steps),
  });
}
