// The column rules of one compiled policy (compiler/columns.ts decides them), ready for requests:
// each chosen row's `columns` parsed once, and per caller the read and write access memoised by
// what auth_user alone makes of each row (applies or not, always TRUE or not) — callers with the
// same outcomes share one answer, so a request never parses and rarely builds anything. A policy
// whose usable rows all grant every column has no rules at all (`undefined`): reads and writes
// without column rules do no extra work.

import type { Expr } from '../grammar/ast.js';
import { parseColumnRule, type ColumnRule } from '../grammar/column-rule.js';
import { PolicySyntaxError } from '../grammar/policy-syntax-error.js';
import {
  readableColumns,
  unknownColumnsOf,
  writableColumns,
  type ColumnAccess,
  type ColumnGrant,
  type ReadAccess,
  type WriteAccess,
} from './columns.js';
import { compileCondition, outcomesForUser, type CompiledCondition, type EvalRelations } from './evaluate.js';
import type { AuthUser, ColumnTypes, PolicyRow } from './types.js';

/** A chosen row that parses and type-checks, with its expression. */
export interface UsableRow {
  readonly row: PolicyRow;
  readonly expr: Expr;
}

export interface ColumnRules {
  /** read / read_mine: per column always readable, masked under a condition, or hidden. */
  read(user: AuthUser, primaryKey: readonly string[]): ColumnAccess<ReadAccess>;
  /** create / update: per column always writable, under a condition, or never. */
  write(user: AuthUser, primaryKey: readonly string[]): ColumnAccess<WriteAccess>;
}

/** A rule that grants nothing: what a row whose `columns` is broken grants (fail closed). */
const NOTHING: ColumnRule = Object.freeze({ kind: 'only', columns: Object.freeze([]) });

/**
 * The rule a stored row grants on `columns`: a rule that no longer parses, or that names a column
 * its own table lacks (renamed or dropped since), grants nothing.
 */
export function storedColumnRule(row: PolicyRow, columns: ColumnTypes): ColumnRule {
  let rule: ColumnRule;
  try {
    rule = parseColumnRule(row.columns);
  } catch (error) {
    if (error instanceof PolicySyntaxError) return NOTHING;
    throw error;
  }
  if (row.table_name !== 'all' && unknownColumnsOf(rule, columns).length > 0) return NOTHING;
  return rule;
}

/** The column rules of `rows` on a table with `columns`; undefined when each grants every column. */
export function columnRulesOf(
  rows: readonly UsableRow[],
  columns: ColumnTypes,
  relations: EvalRelations,
): ColumnRules | undefined {
  const grants: ColumnGrant[] = rows.map(({ row, expr }) => ({
    policyId: row.id,
    tableName: row.table_name,
    expr,
    rule: storedColumnRule(row, columns),
  }));
  if (grants.every((g) => g.rule.kind === 'all')) return undefined;
  let conditions: readonly CompiledCondition[] | undefined;
  const outcomesKey = (user: AuthUser): string => {
    conditions ??= grants.map((g) => compileCondition(g.expr, columns, relations));
    return conditions.map((c) => outcomesForUser(c, user)).join(',');
  };
  const memo = <A>(
    decide: typeof readableColumns | typeof writableColumns,
  ): ((user: AuthUser, primaryKey: readonly string[]) => ColumnAccess<A>) => {
    const cache = new Map<string, ColumnAccess<A>>();
    return (user, primaryKey) => {
      const key = `${outcomesKey(user)}\u0000${primaryKey.join('\u0000')}`;
      let access = cache.get(key);
      if (access === undefined) {
        access = decide({ grants, user, columns, primaryKey, relations }) as ColumnAccess<A>;
        // Outcomes take few values (three per row), so the memo stays small; bound it anyway.
        if (cache.size >= 256) cache.clear();
        cache.set(key, access);
      }
      return access;
    };
  };
  return Object.freeze({
    read: memo<ReadAccess>(readableColumns),
    write: memo<WriteAccess>(writableColumns),
  });
}
