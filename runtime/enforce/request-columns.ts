// What the column rules (docs/policy-language.md, compiler/column-rules.ts) mean for one request,
// as the planner uses it: the columns hidden from the caller's reads, the SQL condition under
// which each masked column shows, and the body keys the caller may not write. Reads, the filters
// of writes and the answers of writes follow the caller's `read` rules (`read_mine` its own);
// bodies follow the write action's. Built once per policy and caller outcome (the compiler's memo)
// and path, so a request never parses nor compiles; undefined when no rule restricts anything.

import type { Expr } from '../../grammar/ast.js';
import type { ColumnAccess, ReadAccess, WriteAccess } from '../../compiler/columns.js';
import type { CompiledPolicy, PolicySet } from '../../compiler/policy-set.js';
import { SESSION_BINDING } from '../../compiler/rls/session-settings.js';
import { compileToSql } from '../../compiler/sql/compile-predicate.js';
import { renderInlinePostgres, type SqlFragment } from '../../compiler/sql/fragment.js';
import { postgresDialect } from '../../compiler/sql/postgres-dialect.js';
import type { Action, AuthUser } from '../../compiler/types.js';
import type { SchemaSnapshot, TableInfo } from '../db/adapter.js';
import { tablePolicy } from './decide.js';
import { policyDenied } from './denials.js';

export interface ReadColumns {
  /** Left out of `*`; naming one in `select`, a filter or `order` is 403/401 `hidden_column`. */
  readonly hidden: ReadonlySet<string>;
  /** A masked column reads as NULL in the rows where its condition is not TRUE. */
  readonly masks: ReadonlyMap<string, SqlFragment>;
}

export interface WriteColumns {
  /** Body keys no applying row grants: 403/401 `protected_column`. */
  readonly never: ReadonlySet<string>;
  /** Body keys granted under a condition the row as written (and, updating, before) must meet. */
  readonly when: ReadonlyMap<string, SqlFragment>;
}

export interface RequestColumns {
  readonly read?: ReadColumns;
  readonly write?: WriteColumns;
}

/**
 * How a path writes a column rule's condition: the portable path as the policy's own predicate
 * (auth_user bound as parameters, inner tables' read policies inlined), the native path reading
 * auth_user from the session settings its RLS policies read, inner tables under their own RLS.
 */
export type ConditionSql = (policy: CompiledPolicy, when: Expr) => SqlFragment;

export const portableCondition: ConditionSql = (policy, when) => policy.compilePart(when);

export const nativeCondition: ConditionSql = (policy, when) => {
  const relation =
    policy.schema === undefined ? { table: policy.table } : { table: policy.table, schema: policy.schema };
  const columns = policy.schema?.get(policy.table);
  const text = renderInlinePostgres(
    compileToSql(when, postgresDialect, {
      ...(columns === undefined ? {} : { columns }),
      auth: SESSION_BINDING,
      arrayMembership: true,
      ...relation,
    }),
  );
  return Object.freeze({ parts: Object.freeze([{ kind: 'text' as const, text }]) });
};

type Memo<A, V> = WeakMap<ConditionSql, WeakMap<ColumnAccess<A>, V | null>>;
const readMemo: Memo<ReadAccess, ReadColumns> = new WeakMap();
const writeMemo: Memo<WriteAccess, WriteColumns> = new WeakMap();

function memoised<A, V>(
  memo: Memo<A, V>,
  sql: ConditionSql,
  access: ColumnAccess<A>,
  build: () => V | undefined,
): V | undefined {
  let byAccess = memo.get(sql);
  if (byAccess === undefined) {
    byAccess = new WeakMap();
    memo.set(sql, byAccess);
  }
  let view = byAccess.get(access);
  if (view === undefined) {
    view = build() ?? null;
    byAccess.set(access, view);
  }
  return view ?? undefined;
}

/** The caller's read rules of `policy` (read or read_mine); undefined when nothing is hidden or masked. */
export function readColumnsOf(
  policy: CompiledPolicy,
  table: TableInfo,
  user: AuthUser,
  sql: ConditionSql,
): ReadColumns | undefined {
  const access = policy.columnRules?.read(user, table.primaryKey);
  if (access === undefined) return undefined;
  return memoised(readMemo, sql, access, () => {
    const hidden = new Set<string>();
    const masks = new Map<string, SqlFragment>();
    for (const [column, a] of access.columns) {
      if (a.kind === 'hidden') hidden.add(column);
      else if (a.kind === 'masked') masks.set(column, sql(policy, a.when));
    }
    return hidden.size === 0 && masks.size === 0 ? undefined : Object.freeze({ hidden, masks });
  });
}

/** The caller's write rules of `policy` (create or update); undefined when every key is writable. */
export function writeColumnsOf(
  policy: CompiledPolicy,
  table: TableInfo,
  user: AuthUser,
  sql: ConditionSql,
): WriteColumns | undefined {
  const access = policy.columnRules?.write(user, table.primaryKey);
  if (access === undefined) return undefined;
  return memoised(writeMemo, sql, access, () => {
    const never = new Set<string>();
    const when = new Map<string, SqlFragment>();
    for (const [column, a] of access.columns) {
      if (a.kind === 'never') never.add(column);
      else if (a.kind === 'when') when.set(column, sql(policy, a.when));
    }
    return never.size === 0 && when.size === 0 ? undefined : Object.freeze({ never, when });
  });
}

export interface ColumnsRequest {
  readonly compiled: PolicySet;
  /** The request's own compiled policy. */
  readonly policy: CompiledPolicy;
  readonly table: TableInfo;
  readonly action: Action;
  readonly user: AuthUser;
  readonly schema: SchemaSnapshot;
}

/** The column rules of a request (see the header); undefined when none restricts it. */
export function requestColumns(request: ColumnsRequest, sql: ConditionSql): RequestColumns | undefined {
  const { compiled, policy, table, action, user, schema } = request;
  const readPolicy =
    action === 'read' || action === 'read_mine' ? policy : tablePolicy(compiled, table, 'read', schema);
  const read = readColumnsOf(readPolicy, table, user, sql);
  const write =
    action === 'create' || action === 'update' ? writeColumnsOf(policy, table, user, sql) : undefined;
  if (read === undefined && write === undefined) return undefined;
  return { ...(read === undefined ? {} : { read }), ...(write === undefined ? {} : { write }) };
}

/** 403 `hidden_column` (401 anonymous) for the first of `names` hidden from the caller. */
export function refuseHidden(
  user: AuthUser,
  table: string,
  read: ReadColumns | undefined,
  names: Iterable<string>,
): void {
  if (read === undefined || read.hidden.size === 0) return;
  for (const column of names) {
    if (!read.hidden.has(column)) continue;
    throw policyDenied(user, table, {
      code: 'hidden_column',
      message: user.is_authenticated
        ? `column ${column} of ${table} is hidden from you`
        : `log in to read column ${column} of ${table}`,
      details: { table, column },
    });
  }
}

/** 403 `protected_column` (401 anonymous) for the first key of `rows` no applying row lets the caller write. */
export function refuseProtected(
  user: AuthUser,
  table: string,
  write: WriteColumns | undefined,
  rows: readonly Readonly<Record<string, unknown>>[],
): void {
  if (write === undefined || write.never.size === 0) return;
  for (const row of rows) {
    for (const column of Object.keys(row)) {
      if (!write.never.has(column)) continue;
      throw protectedColumn(user, table, column);
    }
  }
}

export const protectedColumn = (user: AuthUser, table: string, column: string): Error =>
  policyDenied(user, table, {
    code: 'protected_column',
    message: user.is_authenticated
      ? `you may not write column ${column} of ${table}; nothing was written`
      : `log in to write column ${column} of ${table}`,
    details: { table, column },
  });

/**
 * The condition a row as written must meet for the body's `keys` that are granted under one (the
 * AND of their conditions); undefined when every key is always writable.
 */
export function keysCondition(
  write: WriteColumns | undefined,
  keys: Iterable<string>,
): { readonly condition: SqlFragment; readonly columns: readonly string[] } | undefined {
  if (write === undefined || write.when.size === 0) return undefined;
  const columns: string[] = [];
  const conditions: SqlFragment[] = [];
  for (const key of new Set(keys)) {
    const when = write.when.get(key);
    if (when === undefined) continue;
    columns.push(key);
    if (!conditions.includes(when)) conditions.push(when);
  }
  if (conditions.length === 0) return undefined;
  const parts = conditions.flatMap((c, i) => [
    ...(i > 0 ? [{ kind: 'text' as const, text: ') AND (' }] : []),
    ...c.parts,
  ]);
  return {
    condition: Object.freeze({
      parts: Object.freeze([
        { kind: 'text' as const, text: '(' },
        ...parts,
        { kind: 'text' as const, text: ')' },
      ]),
    }),
    columns: Object.freeze(columns),
  };
}
