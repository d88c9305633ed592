// The columns one caller may read and write on a table (`rest policy explain`, the console), as
// data: per action the columns always readable or writable, those masked or written only under a
// condition on the row (the OR of the granting rows' expressions, printed), and those hidden or
// protected. Decided by compiler/columns.ts through each action's compiled policy, exactly as a
// request is; the server's secret columns (auth_users.password) are never listed.

import { printPolicy, type AuthUser, type CompiledPolicy, type PolicySet } from '../../compiler/index.js';
import type { ColumnAccess, ReadAccess, WriteAccess } from '../../compiler/columns.js';
import type { SchemaSnapshot, TableInfo } from '../db/adapter.js';
import { isSecretColumn } from '../auth/secret-columns.js';
import { tablePolicy } from '../enforce/decide.js';

/** A column shown or written only on the rows where `when` is TRUE. */
export interface ColumnCondition {
  readonly column: string;
  /** The condition in canonical text (printPolicy). */
  readonly when: string;
  /** The policy rows whose expressions make it up. */
  readonly policy_ids: readonly number[];
}

export interface ReadColumns {
  /** The caller may not read the table at all: every column is moot. */
  readonly denied: boolean;
  readonly readable: readonly string[];
  /** Shown where `when` holds, NULL in the other rows the caller sees. */
  readonly masked: readonly ColumnCondition[];
  /** Left out of `*` and refused by name. */
  readonly hidden: readonly string[];
}

export interface WriteColumns {
  readonly denied: boolean;
  readonly writable: readonly string[];
  /** A body may set it when `when` holds for the row as written. */
  readonly conditional: readonly ColumnCondition[];
  /** A body that sets it is refused. */
  readonly protected: readonly string[];
}

export interface ColumnsExplanation {
  readonly read: ReadColumns;
  readonly create: WriteColumns;
  readonly update: WriteColumns;
}

/** Columns sorted into granted, granted under a condition and refused. */
interface Sorted {
  readonly denied: boolean;
  readonly free: string[];
  readonly conditional: ColumnCondition[];
  readonly refused: string[];
}

function sort(
  policy: CompiledPolicy,
  table: TableInfo,
  user: AuthUser,
  access: ColumnAccess<ReadAccess | WriteAccess> | undefined,
): Sorted {
  const denied = policy.decide(user).kind === 'deny';
  const sorted: Sorted = { denied, free: [], conditional: [], refused: [] };
  for (const { name } of table.columns) {
    if (isSecretColumn(table.name, name)) continue;
    const a = access?.columns.get(name) ?? { kind: 'always' as const };
    if (denied) sorted.refused.push(name);
    else if (a.kind === 'always') sorted.free.push(name);
    else if (a.kind === 'masked' || a.kind === 'when')
      sorted.conditional.push({ column: name, when: printPolicy(a.when), policy_ids: a.policyIds });
    else sorted.refused.push(name);
  }
  return sorted;
}

/** What `user` may read and write of `table` under `set` (the compiled stored policies). */
export function explainColumns(
  set: PolicySet,
  table: TableInfo,
  schema: SchemaSnapshot,
  user: AuthUser,
): ColumnsExplanation {
  const policyFor = (action: 'read' | 'create' | 'update'): CompiledPolicy =>
    tablePolicy(set, table, action, schema);
  const read = policyFor('read');
  const r = sort(read, table, user, read.columnRules?.read(user, table.primaryKey));
  const write = (action: 'create' | 'update'): WriteColumns => {
    const policy = policyFor(action);
    const w = sort(policy, table, user, policy.columnRules?.write(user, table.primaryKey));
    return { denied: w.denied, writable: w.free, conditional: w.conditional, protected: w.refused };
  };
  return {
    read: { denied: r.denied, readable: r.free, masked: r.conditional, hidden: r.refused },
    create: write('create'),
    update: write('update'),
  };
}
