// Column privileges of native RLS (docs/row-level-security.md): the columns of a table that no
// request may read, whoever asks, are withheld from the request role (`GRANT SELECT (a, b, …)`
// names the others), so not even SQL run as that role by hand reads them. A column is withheld
// when the table's `read` policy has column rules, it is not part of the primary key, no usable
// row of the table's `read` and `read_mine` policies grants it, and no policy expression names it: a masked column's condition and another
// table's subquery are evaluated with the request role's privileges, so what they read stays
// granted (the column rules still hide it from requests).

import { analyze } from '../analyze.js';
import { grantsColumn } from '../columns.js';
import { storedColumnRule } from '../column-rules.js';
import type { PolicySet } from '../policy-set.js';
import type { SchemaTypes } from '../scope.js';
import { ACTIONS, type ColumnTypes } from '../types.js';

export interface WithheldInput {
  readonly policies: PolicySet;
  readonly table: string;
  readonly columns: ColumnTypes;
  readonly primaryKey: readonly string[];
  readonly schema?: SchemaTypes;
}

/** The columns of `table` withheld from the request role, in table order. */
export function withheldColumns(input: WithheldInput): readonly string[] {
  const { policies, table, columns, schema } = input;
  // Without column rules on `read`, writes answer with every column and filter on any; a
  // `read_mine` that lets some row through without them reads every column.
  const read = policies.policyFor(table, 'read', columns, schema);
  const mine = policies.policyFor(table, 'read_mine', columns, schema);
  if (read.columnRules === undefined) return [];
  if (mine.columnRules === undefined && mine.usable.length > 0 && mine.missingColumns.length === 0) return [];
  const keep = new Set(input.primaryKey);
  for (const policy of [read, mine]) {
    for (const { row } of policy.usable) {
      const rule = storedColumnRule(row, columns);
      for (const column of columns.keys()) if (grantsColumn(rule, column)) keep.add(column);
    }
  }
  if (keep.size === columns.size) return [];
  for (const action of ACTIONS) {
    for (const column of policies.policyFor(table, action, columns, schema).columns) keep.add(column);
  }
  for (const parsed of policies.policies) {
    if (!parsed.ok) continue;
    for (const column of analyze(parsed.expr).relations.get(table) ?? []) keep.add(column);
  }
  return Object.freeze([...columns.keys()].filter((c) => !keep.has(c)));
}
