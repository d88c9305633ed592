// Which table a column reference names (docs/policy-language.md): scopes nest from the policy's own table
// (outermost) to the innermost subquery's table; a bare column is the innermost table's, a
// qualified `t.c` is the innermost scope on `t`. Shared by analysis, evaluation and SQL.

import type { ColumnRef } from '../grammar/ast.js';
import type { ColumnTypes } from './types.js';
import type { ColumnType } from './types.js';

/** The column types of every table a policy may read, by table name. */
export type SchemaTypes = ReadonlyMap<string, ColumnTypes>;

/** What a policy is compiled against, beyond its own table's columns (all optional, additive). */
export interface RelationContext {
  /** The policy's own table: `<table>.<col>` outside any subquery names it. */
  readonly table?: string;
  /** Every table's column types: subqueries are typed and checked against it. */
  readonly schema?: SchemaTypes;
}

export interface ScopeTable {
  /** undefined: the policy's own table when its name is not given. */
  readonly table: string | undefined;
  /** undefined: not known (no schema given, or no such table). */
  readonly columns: ColumnTypes | undefined;
}

/** Outermost (the policy's table) first. */
export type Scope = readonly ScopeTable[];

export interface ResolvedColumn {
  /** Index into the scope: 0 is the policy's own table. */
  readonly level: number;
  readonly table: string | undefined;
  readonly name: string;
  /** undefined when the table's columns are not known or it lacks the column. */
  readonly type: ColumnType | undefined;
}

export const outerScope = (columns: ColumnTypes | undefined, context: RelationContext = {}): Scope => [
  {
    table: context.table,
    columns: columns ?? (context.table === undefined ? undefined : context.schema?.get(context.table)),
  },
];

/** The scope inside a subquery on `table`. */
export const enterScope = (scope: Scope, table: string, context: RelationContext): Scope => [
  ...scope,
  { table, columns: context.schema?.get(table) },
];

/**
 * The table and level a reference names; undefined when a qualifier names no table in scope. When
 * the policy's own table is not named (analysis of a policy for `all`), a qualifier that names no
 * subquery's table is taken to be it.
 */
export function resolveColumn(scope: Scope, ref: ColumnRef): ResolvedColumn | undefined {
  let level = scope.length - 1;
  if (ref.kind === 'qualified_column') {
    while (level >= 0 && scope[level]?.table !== ref.table) level -= 1;
    if (level < 0 && scope[0]?.table === undefined) level = 0;
    if (level < 0) return undefined;
  }
  const at = scope[level];
  return {
    level,
    table: ref.kind === 'qualified_column' ? ref.table : at?.table,
    name: ref.name,
    type: at?.columns?.get(ref.name),
  };
}
