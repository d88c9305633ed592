// One table request, PostgREST's path: authorize → plan → render → run (one statement, or one
// transaction with the write guards) → the JSON answer. Each action reads as plan → run → answer;
// a write's plan (plan/write-plan.ts) says whether it is one statement or a transaction and how
// its stored rows come back to be judged. Database errors arrive mapped, by the adapter that ran
// the statement (runtime/db/<kind>/).

import type { Dialect } from '../../compiler/sql/dialect.js';
import { renderSql, SqlBuilder, type SqlFragment } from '../../compiler/sql/fragment.js';
import type { AuthUser } from '../../compiler/types.js';
import { internalError, isRestError, RestError } from '../../errors/rest-error.js';
import type { ColumnInfo, DbSession, Returning, Row, SchemaSnapshot, TableInfo } from '../db/adapter.js';
import type { Authorization, Authorizer, WriteGuard, WriteRow } from '../enforce/authorizer.js';
import { policyDenied, type Rejected } from '../enforce/denials.js';
import type { RequestRunner, RunContext } from '../enforce/request-runner.js';
import {
  judgeStoredRows,
  raisedCheckRefusal,
  unverifiable,
  type StoredJudgement,
} from '../enforce/stored-checks.js';
import {
  keysCondition,
  protectedColumn,
  refuseHidden,
  refuseProtected,
  type ReadColumns,
  type RequestColumns,
} from '../enforce/request-columns.js';
import { columnOf, selectedColumns } from '../plan/columns.js';
import { planRead, type ReadRequest } from '../plan/plan-read.js';
import {
  conflictWhere,
  deleteStatement,
  hasOutput,
  insertedKeyWhere,
  insertStatement,
  keyedWhere,
  lockedKeysStatement,
  lockedRowsStatement,
  patchedKeys,
  storedRowsStatement,
  toWriteRow,
  updateStatement,
  type StoredShape,
} from '../plan/plan-write.js';
import { whereClause } from '../plan/where.js';
import {
  planCreate,
  planUpdate,
  storedShape,
  type WriteCapabilities,
  type WritePlan,
  type WritePolicy,
} from '../plan/write-plan.js';
import {
  actionOf,
  columnFilters,
  type ChangeOptions,
  type Filter,
  type ParsedRequest,
} from '../request/types.js';
import { singularMismatch } from '../request/parse-pgrst.js';

export interface TableHandlerDeps {
  readonly dialect: Dialect;
  /** Which writes hand back their stored rows in the same statement (the adapter's). */
  readonly returning: Returning;
  readonly authorizer: Authorizer;
  readonly runner: RequestRunner;
}

/**
 * What a table request came to, before either dialect shapes it into an answer
 * (runtime/http/seed-answer.ts, runtime/http/pgrst-answer.ts).
 */
export type Outcome =
  | {
      readonly kind: 'rows';
      readonly rows: readonly Row[];
      /** Every row the filters and policies let through, when the request asked (`countAll`). */
      readonly total: number | undefined;
      readonly offset: number;
    }
  | { readonly kind: 'row'; readonly row: Row }
  | { readonly kind: 'count'; readonly count: number }
  | { readonly kind: 'created'; readonly rows: readonly Row[]; readonly many: boolean }
  | {
      readonly kind: 'updated' | 'deleted';
      readonly count: number;
      /** The changed rows as stored, when the request asked for them. */
      readonly rows: readonly Row[] | undefined;
    };

/** A request answered, then rolled back (`Prefer: tx=rollback`): the answer rides the rollback out. */
class RolledBack<T> extends Error {
  constructor(readonly result: T) {
    super('rolled back on request');
  }
}

type CreateRequest = Extract<ParsedRequest, { kind: 'create' }>;
type UpdateRequest = Extract<ParsedRequest, { kind: 'update' }>;
type DeleteRequest = Extract<ParsedRequest, { kind: 'delete' }>;
type WriteAction = 'create' | 'update';
type TransactionPlan = Extract<WritePlan, { kind: 'transaction' }>;

interface Ctx {
  readonly deps: TableHandlerDeps;
  readonly table: TableInfo;
  readonly user: AuthUser;
  readonly run: RunContext;
  readonly predicate: SqlFragment | undefined;
  /** create/update: what the rows as stored must satisfy, evaluated by the database. */
  readonly check: SqlFragment | undefined;
  readonly guard: WriteGuard | undefined;
  /** The caller's column rules (enforce/request-columns.ts); undefined: every column. */
  readonly columns: RequestColumns | undefined;
}

/** The columns a request names for reading: `select`, its filters, `order`, `on_conflict`. */
function namedColumns(request: ParsedRequest): readonly string[] {
  const filtered = (r: { readonly filters: readonly Filter[] }): readonly string[] =>
    r.filters.flatMap((f) => columnFilters(f).map((c) => c.column));
  switch (request.kind) {
    case 'list':
      return [...(request.select ?? []), ...filtered(request), ...request.order.map((o) => o.column)];
    case 'get':
      return [...(request.select ?? []), ...filtered(request)];
    case 'count':
      return filtered(request);
    case 'create':
      return [...(request.select ?? []), ...(request.upsert?.onConflict ?? [])];
    case 'update':
    case 'delete':
      return [...(request.options?.select ?? []), ...filtered(request)];
  }
}

const readColumns = (ctx: Ctx): ReadColumns | undefined => ctx.columns?.read;

const notFound = (table: string): RestError => new RestError('not_found', `no such row in ${table}`);

/** The table columns of the caller's masked columns, which come back through an expression. */
function maskedColumns(ctx: Ctx): ReadonlyMap<string, ColumnInfo> | undefined {
  const masks = readColumns(ctx)?.masks;
  if (masks === undefined || masks.size === 0) return undefined;
  const columns = new Map<string, ColumnInfo>();
  for (const name of masks.keys()) {
    const column = ctx.table.columnsByName.get(name);
    if (column !== undefined) columns.set(name, column);
  }
  return columns;
}

async function query(ctx: Ctx, session: DbSession, statement: SqlFragment) {
  const sql = renderSql(ctx.deps.dialect, statement, ctx.user);
  const typedAs = maskedColumns(ctx);
  return session.query(typedAs === undefined ? sql : { ...sql, typedAs });
}

/** Runs `fn` in a transaction of its own; with `rollback`, answers with its result and writes nothing. */
async function transact<T>(ctx: Ctx, rollback: boolean, fn: (tx: DbSession) => Promise<T>): Promise<T> {
  try {
    return await ctx.deps.runner.run(ctx.run, 'transaction', async (tx) => {
      const result = await fn(tx);
      if (rollback) throw new RolledBack(result);
      return result;
    });
  } catch (e) {
    if (e instanceof RolledBack) return e.result as T;
    throw e;
  }
}

const countOf = (row: Row | undefined, column: string): number => Number(row?.[column] ?? 0);

/** The rows without the window count's column, and the count it carried. */
function withoutTotal(
  rows: readonly Row[],
  column: string,
): { rows: readonly Row[]; total: number | undefined } {
  const first = rows[0];
  if (first === undefined) return { rows, total: undefined };
  return {
    rows: rows.map((row) => Object.fromEntries(Object.entries(row).filter(([name]) => name !== column))),
    total: countOf(first, column),
  };
}

async function read(ctx: Ctx, request: ReadRequest): Promise<Outcome> {
  const plan = planRead(request, ctx.table, ctx.predicate, ctx.deps.dialect, readColumns(ctx));
  const result = await ctx.deps.runner.run(ctx.run, 'single', (s) => query(ctx, s, plan.statement));
  switch (plan.shape) {
    case 'rows': {
      const offset = request.kind === 'list' ? request.window.offset : 0;
      if (plan.totalColumn === undefined)
        return { kind: 'rows', rows: result.rows, total: undefined, offset };
      const { rows, total } = withoutTotal(result.rows, plan.totalColumn);
      // No row came back: the window count had no row to ride on; past the first row, ask again.
      if (total !== undefined || offset === 0 || request.kind !== 'list')
        return { kind: 'rows', rows, total: total ?? 0, offset };
      const counted = planRead(
        { kind: 'count', table: request.table, filters: request.filters, mine: request.mine },
        ctx.table,
        ctx.predicate,
        ctx.deps.dialect,
        readColumns(ctx),
      );
      const again = await ctx.deps.runner.run(ctx.run, 'single', (s) => query(ctx, s, counted.statement));
      return { kind: 'rows', rows, total: countOf(again.rows[0], 'count'), offset };
    }
    case 'row': {
      const row = result.rows[0];
      if (row === undefined) throw notFound(ctx.table.name);
      return { kind: 'row', row };
    }
    case 'count':
      return { kind: 'count', count: countOf(result.rows[0], 'count') };
  }
}

/** The values of `columns` that `row` has. */
const pick = (row: Readonly<Record<string, unknown>>, columns: readonly ColumnInfo[]): Row =>
  Object.fromEntries(columns.filter((c) => Object.hasOwn(row, c.name)).map((c) => [c.name, row[c.name]]));

const capabilities = ({ dialect, returning }: TableHandlerDeps): WriteCapabilities => ({
  returning,
  checkInStatement: dialect.checkInStatement,
  manyRowInsert: dialect.manyRowInsert,
});

/** What the policy asks of a write whose bodies set `keys`. */
const writePolicy = (ctx: Ctx, keys: Iterable<string> = []): WritePolicy => {
  const masks = readColumns(ctx)?.masks;
  const keyed = keysCondition(ctx.columns?.write, keys);
  return {
    check: ctx.check,
    checksStoredRows: ctx.guard?.checkStoredRows !== undefined,
    preparesPatch: ctx.guard?.preparePatch !== undefined,
    ...(masks === undefined ? {} : { masks }),
    ...(keyed === undefined ? {} : { columnCheck: { predicate: keyed.condition, names: keyed.columns } }),
  };
};

const keysOf = (rows: readonly WriteRow[]): readonly string[] => rows.flatMap((row) => Object.keys(row));

/**
 * An update's keys granted under a column rule's condition must be granted on the rows before the
 * change too: 403/401 protected_column when a row the update changes does not meet it.
 */
async function refuseProtectedBefore(
  ctx: Ctx,
  tx: DbSession,
  where: SqlFragment,
  policy: WritePolicy,
): Promise<void> {
  const check = policy.columnCheck;
  if (check === undefined) return;
  const { dialect } = ctx.deps;
  const b = new SqlBuilder(dialect)
    .append('SELECT 1 FROM ')
    .appendIdent(ctx.table.name)
    .appendFragment(where);
  b.append(where.parts.length === 0 ? ' WHERE ' : ' AND ')
    .append('(CASE WHEN (')
    .appendFragment(check.predicate)
    .append(') THEN 0 ELSE 1 END) = 1')
    .append(dialect.forUpdate);
  const { rows } = await query(ctx, tx, b.build());
  if (rows.length > 0) throw protectedColumn(ctx.user, ctx.table.name, check.names.join(', '));
}

const judgementOf = (ctx: Ctx, action: WriteAction, stored: StoredShape): StoredJudgement | undefined => {
  const { check } = stored;
  if (check === undefined) return undefined;
  const judgement = { user: ctx.user, table: ctx.table.name, action, flag: check.name };
  return check.columns === undefined ? judgement : { ...judgement, columns: check.columns.names };
};

/** `rows` as stored without their check's flag; the first row that failed the check refuses the request. */
function judged(
  ctx: Ctx,
  action: WriteAction,
  stored: StoredShape,
  rows: readonly Row[],
  position?: { readonly offset: number; readonly many: boolean },
): readonly Row[] {
  const judgement = judgementOf(ctx, action, stored);
  return judgement === undefined ? rows : judgeStoredRows(rows, judgement, position);
}

const prepareCreate = async (
  ctx: Ctx,
  rows: readonly WriteRow[],
  s: DbSession,
): Promise<readonly WriteRow[]> =>
  ctx.guard?.prepareCreate === undefined ? rows : ctx.guard.prepareCreate(rows, s);

const preparePatch = async (ctx: Ctx, patch: WriteRow, s: DbSession): Promise<WriteRow> =>
  ctx.guard?.preparePatch === undefined ? patch : ctx.guard.preparePatch(patch, s);

/**
 * A one-statement write: its own transaction, its COMMIT in the same round trip. Where its raising
 * check ended it, the policy refused a row (which row of a several-row create, the one statement
 * does not tell).
 */
async function oneStatement<T>(
  ctx: Ctx,
  action: WriteAction,
  stored: StoredShape,
  fn: (s: DbSession) => Promise<T>,
  rejected?: Rejected,
): Promise<T> {
  try {
    return await ctx.deps.runner.run(ctx.run, 'single', fn);
  } catch (e) {
    const judgement = judgementOf(ctx, action, stored);
    throw judgement === undefined ? e : raisedCheckRefusal(e, judgement, rejected);
  }
}

/**
 * Hands a guard that judges stored rows the written rows as stored: every column, unmasked, read
 * again by their primary key in `tx` (the answer's rows carry the key, but only the columns asked
 * for, as the caller reads them).
 */
async function checkStoredRows(ctx: Ctx, tx: DbSession, written: readonly Row[]): Promise<void> {
  const check = ctx.guard?.checkStoredRows;
  if (check === undefined) return;
  const { table } = ctx;
  const { dialect } = ctx.deps;
  const where = keyedWhere(table, written, dialect);
  if (where === undefined) throw unverifiable(ctx.user, table.name);
  const shape = { columns: selectedColumns(table, undefined) };
  const { rows } = await query(ctx, tx, storedRowsStatement(table, where, shape, dialect));
  if (rows.length !== written.length)
    throw internalError('the written rows could not be read back by their key');
  await check(rows, tx);
}

/** Inserts `rows` in one statement; their stored columns and flags (what `stored` asks for) by RETURNING. */
async function insertReturning(
  ctx: Ctx,
  tx: DbSession,
  rows: readonly WriteRow[],
  stored: StoredShape,
): Promise<readonly Row[]> {
  const inserted = await query(ctx, tx, insertStatement(ctx.table, rows, stored, ctx.deps.dialect));
  if (!hasOutput(stored)) return rows.map(() => ({}));
  if (inserted.rows.length !== rows.length) {
    throw internalError(`INSERT … RETURNING gave ${inserted.rows.length} rows for ${rows.length}`);
  }
  return inserted.rows;
}

/** Inserts one row and reads it back as stored, found by the key the database gave it. */
async function insertReadBack(
  ctx: Ctx,
  tx: DbSession,
  row: WriteRow,
  stored: StoredShape,
): Promise<readonly Row[]> {
  const { table } = ctx;
  const { dialect } = ctx.deps;
  const inserted = await query(ctx, tx, insertStatement(table, [row], undefined, dialect));
  const where = insertedKeyWhere(table, row, inserted.insertId, dialect);
  if (where === undefined) {
    if (stored.check !== undefined) throw unverifiable(ctx.user, table.name);
    // Nothing to judge, but no way to read the row back: answer with the values written.
    return [pick(row, stored.columns)];
  }
  const { rows } = await query(ctx, tx, storedRowsStatement(table, where, stored, dialect));
  if (rows.length !== 1) throw internalError('the inserted row could not be read back by its key');
  return rows;
}

async function createInOneStatement(
  ctx: Ctx,
  stored: StoredShape,
  rows: readonly WriteRow[],
): Promise<readonly Row[]> {
  const many = rows.length > 1;
  const written = await oneStatement(
    ctx,
    'create',
    stored,
    async (s) => insertReturning(ctx, s, await prepareCreate(ctx, rows, s), stored),
    many ? { many } : { index: 0, many },
  );
  return judged(ctx, 'create', stored, written, { offset: 0, many });
}

async function createInTransaction(
  ctx: Ctx,
  plan: TransactionPlan,
  rows: readonly WriteRow[],
  rollback: boolean,
): Promise<readonly Row[]> {
  const many = rows.length > 1;
  return transact(ctx, rollback, async (tx) => {
    const stored: Row[] = [];
    for (const [index, row] of (await prepareCreate(ctx, rows, tx)).entries()) {
      const written =
        plan.readBack === 'by-key'
          ? await insertReadBack(ctx, tx, row, plan.stored)
          : await insertReturning(ctx, tx, [row], plan.stored);
      stored.push(...judged(ctx, 'create', plan.stored, written, { offset: index, many }));
    }
    await checkStoredRows(ctx, tx, stored);
    return stored;
  });
}

const runCreate = (
  ctx: Ctx,
  plan: WritePlan,
  rows: readonly WriteRow[],
  rollback: boolean,
): Promise<readonly Row[]> =>
  plan.kind === 'one-statement'
    ? createInOneStatement(ctx, plan.stored, rows)
    : createInTransaction(ctx, plan, rows, rollback);

async function create(
  ctx: Ctx,
  request: CreateRequest,
  meeting: Authorization | undefined,
): Promise<Outcome> {
  const rows = request.rows.map((r) => toWriteRow(ctx.table, r));
  refuseProtected(ctx.user, ctx.table.name, ctx.columns?.write, rows);
  const selected = selectedColumns(ctx.table, request.select, readColumns(ctx)?.hidden);
  // An empty array creates nothing and needs no statement.
  if (rows.length === 0) return { kind: 'created', rows: [], many: request.many };
  const rollback = request.rollback === true;
  if (request.upsert !== undefined && meeting !== undefined) {
    const stored = await upsert(ctx, meeting, request, rows, selected);
    return { kind: 'created', rows: stored.map((row) => pick(row, selected)), many: request.many };
  }
  const plan = planCreate({
    capabilities: capabilities(ctx.deps),
    policy: writePolicy(ctx, keysOf(rows)),
    table: ctx.table,
    rows,
    selected,
    transact: rollback,
  });
  const stored = await runCreate(ctx, plan, rows, rollback);
  return { kind: 'created', rows: stored.map((row) => pick(row, selected)), many: request.many };
}

// ---------------------------------------------------------------------------------------------
// Upsert (docs/postgrest.md): one transaction, row by row. A row meets an existing one when a row
// with its conflict values, as the caller reads them (a masked value is null), is visible to the
// caller's update policy (merge) or read policy (ignore); a merged row is updated under the update policy, an ignored one kept as it is. Every
// other row is inserted under the create policy, like any POST (a row the caller cannot see
// that holds the same key makes that insert a unique violation). Both paths decide the same way:
// natively, each step runs with `rest.action` set to its own action.

/** The conflict target: the named columns, or the primary key. */
function conflictColumns(ctx: Ctx, named: readonly string[] | undefined): readonly ColumnInfo[] {
  const names = named ?? ctx.table.primaryKey;
  if (names.length === 0) {
    throw new RestError(
      'invalid_parameter',
      `table ${ctx.table.name} has no primary key; name the columns of a unique key with on_conflict`,
      { details: { parameter: 'on_conflict' } },
    );
  }
  return names.map((name) => columnOf(ctx.table, name, 'filter'));
}

/** A Ctx for the side of an upsert that meets existing rows; undefined when its policy denies. */
function meetingCtx(ctx: Ctx, action: 'update' | 'read', authorization: Authorization): Ctx | undefined {
  if (authorization.kind === 'deny') return undefined;
  return {
    ...ctx,
    run: { ...ctx.run, action },
    predicate: authorization.kind === 'filter' ? authorization.predicate : undefined,
    check: authorization.kind === 'filter' ? authorization.check : undefined,
    guard: authorization.guard,
    columns: authorization.columns,
  };
}

/** What a write of an upsert hands back: these columns, and the check of `ctx`'s policy, judged after. */
const shapeFor = (ctx: Ctx, columns: readonly ColumnInfo[], keys?: readonly string[]): StoredShape =>
  storedShape(ctx.table, writePolicy(ctx, keys), columns, false);

/**
 * ` WHERE` on `row`'s conflict values as the caller reads them (masked where a column rule masks
 * them), and the policy predicate of `side` where it has one.
 */
function meetWhere(side: Ctx, conflict: readonly ColumnInfo[], row: WriteRow): SqlFragment {
  const { dialect } = side.deps;
  const base = conflictWhere(side.table, conflict, row, dialect, readColumns(side)?.masks);
  if (side.predicate === undefined) return base;
  return new SqlBuilder(dialect)
    .appendFragment(base)
    .append(' AND (')
    .appendFragment(side.predicate)
    .append(')')
    .build();
}

/** Runs `fn` with `rest.action` set to `side`'s action, then back to create. */
async function asSide<T>(ctx: Ctx, side: Ctx, tx: DbSession, fn: () => Promise<T>): Promise<T> {
  await ctx.deps.runner.switchAction?.(tx, side.run);
  const result = await fn();
  await ctx.deps.runner.switchAction?.(tx, ctx.run);
  return result;
}

/** Whether `side` sees a row with `row`'s conflict values (locked when it is to be updated). */
async function meets(
  ctx: Ctx,
  side: Ctx,
  tx: DbSession,
  conflict: readonly ColumnInfo[],
  row: WriteRow,
): Promise<boolean> {
  const { dialect } = ctx.deps;
  const lock = side.run.action === 'update';
  const found = await asSide(ctx, side, tx, () => {
    const where = meetWhere(side, conflict, row);
    const statement = lock
      ? lockedRowsStatement(ctx.table, [], where, dialect)
      : new SqlBuilder(dialect)
          .append('SELECT 1 FROM ')
          .appendIdent(ctx.table.name)
          .appendFragment(where)
          .build();
    return query(side, tx, statement);
  });
  if (found.rows.length > 1) {
    throw new RestError(
      'invalid_parameter',
      `on_conflict must name the columns of a unique key of ${ctx.table.name}`,
      { details: { parameter: 'on_conflict' } },
    );
  }
  return found.rows.length === 1;
}

async function upsert(
  ctx: Ctx,
  meeting: Authorization,
  request: CreateRequest,
  rows: readonly WriteRow[],
  selected: readonly ColumnInfo[],
): Promise<readonly Row[]> {
  const { table } = ctx;
  const upsertOf = request.upsert;
  if (upsertOf === undefined) throw internalError('upsert without its options');
  if (ctx.guard?.checkStoredRows !== undefined || (meeting.kind !== 'deny' && meeting.guard !== undefined)) {
    throw new RestError(
      'unsupported_feature',
      `an upsert into ${table.name} is not supported; create or update its rows`,
    );
  }
  const conflict = conflictColumns(ctx, upsertOf.onConflict);
  const merge = upsertOf.resolution === 'merge';
  const side = meetingCtx(ctx, merge ? 'update' : 'read', meeting);
  const created = shapeFor(ctx, selected, keysOf(rows));
  const many = rows.length > 1;
  return transact(ctx, request.rollback === true, async (tx) => {
    const stored: Row[] = [];
    for (const [index, row] of (await prepareCreate(ctx, rows, tx)).entries()) {
      const complete = conflict.every((c) => row[c.name] !== undefined && row[c.name] !== null);
      if (complete && side !== undefined && (await meets(ctx, side, tx, conflict, row))) {
        if (merge)
          stored.push(
            ...(await upsertUpdate(ctx, side, tx, request.rows[index] ?? {}, conflict, row, selected)),
          );
        continue;
      }
      const inserted = await insertOne(ctx, tx, row, created).catch((e: unknown) => {
        // Merging, a key held by a row the update policy does not show: a row the caller may not change.
        throw merge && complete && isRestError(e) && e.code === 'unique_violation'
          ? cannotChange(ctx, conflict, e)
          : e;
      });
      stored.push(...judged(ctx, 'create', created, inserted, { offset: index, many }));
    }
    return stored;
  });
}

function cannotChange(ctx: Ctx, conflict: readonly ColumnInfo[], cause: unknown): RestError {
  const names = conflict.map((c) => c.name).join(', ');
  return policyDenied(ctx.user, ctx.table.name, {
    code: 'policy_check_failed',
    message: `a row of ${ctx.table.name} with the same ${names} exists, and your update policy does not let you change it`,
    cause,
  });
}

/** Inserts one row in the transaction and hands back what `shape` asks for. */
async function insertOne(
  ctx: Ctx,
  tx: DbSession,
  row: WriteRow,
  shape: StoredShape,
): Promise<readonly Row[]> {
  return ctx.deps.returning.insert
    ? insertReturning(ctx, tx, [row], shape)
    : insertReadBack(ctx, tx, row, shape);
}

/** The update side of an upsert, on the row `meets` found and locked; judged by the update policy. */
async function upsertUpdate(
  ctx: Ctx,
  side: Ctx,
  tx: DbSession,
  body: CreateRequest['rows'][number],
  conflict: readonly ColumnInfo[],
  row: WriteRow,
  selected: readonly ColumnInfo[],
): Promise<readonly Row[]> {
  const patch = toWriteRow(side.table, body);
  refuseProtected(side.user, side.table.name, side.columns?.write, [patch]);
  const where = meetWhere(side, conflict, row);
  const policy = writePolicy(side, Object.keys(patch));
  const shape = storedShape(side.table, policy, selected, false);
  const { stored } = await asSide(ctx, side, tx, async () => {
    await refuseProtectedBefore(side, tx, where, policy);
    return side.deps.returning.update
      ? updateReturning(side, tx, patch, where, shape)
      : updateReadBack(side, tx, patch, where, shape);
  });
  return judged(side, 'update', shape, stored);
}

interface Updated {
  readonly count: number;
  readonly stored: readonly Row[];
}

/** Updates the rows `where` selects; their stored columns and flags by RETURNING. */
async function updateReturning(
  ctx: Ctx,
  tx: DbSession,
  patch: WriteRow,
  where: SqlFragment,
  stored: StoredShape,
): Promise<Updated> {
  const { rows } = await query(ctx, tx, updateStatement(ctx.table, patch, where, stored, ctx.deps.dialect));
  return { count: rows.length, stored: rows };
}

/** Locks the keys of the rows `where` selects, updates exactly those and reads them back as stored. */
async function updateReadBack(
  ctx: Ctx,
  tx: DbSession,
  patch: WriteRow,
  where: SqlFragment,
  stored: StoredShape,
): Promise<Updated> {
  const { table } = ctx;
  const { dialect } = ctx.deps;
  if (table.primaryKey.length === 0) throw unverifiable(ctx.user, table.name);
  const keys = (await query(ctx, tx, lockedKeysStatement(table, where, dialect))).rows;
  const before = keyedWhere(table, keys, dialect);
  const after = keyedWhere(table, patchedKeys(table, keys, patch), dialect);
  if (before === undefined || after === undefined) throw unverifiable(ctx.user, table.name);
  const { rowCount } = await query(ctx, tx, updateStatement(table, patch, before, undefined, dialect));
  const { rows } = await query(ctx, tx, storedRowsStatement(table, after, stored, dialect));
  if (rows.length !== keys.length)
    throw internalError('the updated rows could not be read back by their keys');
  return { count: rowCount, stored: rows };
}

/** The rows changed: RETURNING's rows where the statement has one, else the UPDATE's count. */
async function updateInOneStatement(
  ctx: Ctx,
  stored: StoredShape,
  patch: WriteRow,
  where: SqlFragment,
): Promise<Updated> {
  const result = await oneStatement(ctx, 'update', stored, async (s) =>
    query(
      ctx,
      s,
      updateStatement(ctx.table, await preparePatch(ctx, patch, s), where, stored, ctx.deps.dialect),
    ),
  );
  // The statement ended at a failing row; the flags are read anyway, so that a missing one fails closed.
  const rows = judged(ctx, 'update', stored, result.rows);
  return { count: hasOutput(stored) ? result.rows.length : result.rowCount, stored: rows };
}

/** The bounds of ChangeOptions, checked inside the write's transaction: a breach writes nothing. */
function checkAffected(count: number, options: ChangeOptions | undefined): void {
  if (options === undefined) return;
  if (options.maxAffected !== undefined && count > options.maxAffected) {
    throw new RestError(
      'too_many_affected',
      `the request would change ${count} rows, more than max-affected=${options.maxAffected}; nothing was written`,
      { details: { affected: count, max_affected: options.maxAffected } },
    );
  }
  if (options.singular && count !== 1) throw singularMismatch(count);
}

async function updateInTransaction(
  ctx: Ctx,
  plan: TransactionPlan,
  patch: WriteRow,
  where: SqlFragment,
  options: ChangeOptions | undefined,
): Promise<Updated> {
  return transact(ctx, options?.rollback === true, async (tx) => {
    await refuseProtectedBefore(ctx, tx, where, writePolicy(ctx, Object.keys(patch)));
    const applied = await preparePatch(ctx, patch, tx);
    if (plan.readBack === 'none') {
      const { rowCount } = await query(
        ctx,
        tx,
        updateStatement(ctx.table, applied, where, undefined, ctx.deps.dialect),
      );
      checkAffected(rowCount, options);
      return { count: rowCount, stored: [] };
    }
    const { count, stored } =
      plan.readBack === 'in-statement'
        ? await updateReturning(ctx, tx, applied, where, plan.stored)
        : await updateReadBack(ctx, tx, applied, where, plan.stored);
    const rows = judged(ctx, 'update', plan.stored, stored);
    await checkStoredRows(ctx, tx, rows);
    checkAffected(count, options);
    return { count, stored: rows };
  });
}

const runUpdate = (
  ctx: Ctx,
  plan: WritePlan,
  patch: WriteRow,
  where: SqlFragment,
  options: ChangeOptions | undefined,
): Promise<Updated> =>
  plan.kind === 'one-statement'
    ? updateInOneStatement(ctx, plan.stored, patch, where)
    : updateInTransaction(ctx, plan, patch, where, options);

/** Options that need the write's own transaction: a bound to check or a rollback. */
const needsTransaction = (options: ChangeOptions | undefined): boolean =>
  options !== undefined && (options.rollback || options.singular || options.maxAffected !== undefined);

/** The WHERE of an update or delete: its filters see the caller's masked values (read rules). */
function writeWhere(ctx: Ctx, request: UpdateRequest | DeleteRequest): SqlFragment {
  const masks = readColumns(ctx)?.masks;
  return whereClause(
    {
      table: ctx.table,
      key: request.key,
      filters: request.filters,
      predicate: ctx.predicate,
      ...(masks === undefined ? {} : { masks }),
    },
    ctx.deps.dialect,
  );
}

async function update(ctx: Ctx, request: UpdateRequest): Promise<Outcome> {
  const { table } = ctx;
  const { options } = request;
  const patch = toWriteRow(table, request.patch);
  refuseProtected(ctx.user, table.name, ctx.columns?.write, [patch]);
  const where = writeWhere(ctx, request);
  const selected =
    options?.returnRows === true ? selectedColumns(table, options.select, readColumns(ctx)?.hidden) : [];
  const plan = planUpdate({
    capabilities: capabilities(ctx.deps),
    policy: writePolicy(ctx, Object.keys(patch)),
    table,
    selected,
    transact: needsTransaction(options),
  });
  const { count, stored } = await runUpdate(ctx, plan, patch, where, options);
  if (request.key !== undefined && count === 0) throw notFound(table.name);
  const rows = options?.returnRows === true ? stored.map((row) => pick(row, selected)) : undefined;
  return { kind: 'updated', count, rows };
}

async function remove(ctx: Ctx, request: DeleteRequest): Promise<Outcome> {
  const { table } = ctx;
  const { dialect, returning } = ctx.deps;
  const { options } = request;
  const where = writeWhere(ctx, request);
  const masks = readColumns(ctx)?.masks;
  const selected =
    options?.returnRows === true ? selectedColumns(table, options.select, readColumns(ctx)?.hidden) : [];
  const inStatement = selected.length === 0 || returning.delete;
  if (!needsTransaction(options) && inStatement) {
    const result = await ctx.deps.runner.run(ctx.run, 'single', (s) =>
      query(ctx, s, deleteStatement(table, where, dialect, selected, masks)),
    );
    if (request.key !== undefined && result.rowCount === 0) throw notFound(table.name);
    return { kind: 'deleted', count: result.rowCount, rows: selected.length > 0 ? result.rows : undefined };
  }
  const { count, rows } = await transact(ctx, options?.rollback === true, async (tx) => {
    // Without DELETE … RETURNING the rows are read, locked, before they go.
    const before = inStatement
      ? undefined
      : (await query(ctx, tx, lockedRowsStatement(table, selected, where, dialect, masks))).rows;
    const result = await query(
      ctx,
      tx,
      deleteStatement(table, where, dialect, inStatement ? selected : undefined, masks),
    );
    checkAffected(result.rowCount, options);
    return { count: result.rowCount, rows: before ?? result.rows };
  });
  if (request.key !== undefined && count === 0) throw notFound(table.name);
  return { kind: 'deleted', count, rows: selected.length > 0 ? rows : undefined };
}

export async function handleTableRequest(
  deps: TableHandlerDeps,
  request: ParsedRequest,
  table: TableInfo,
  user: AuthUser,
  schema: SchemaSnapshot,
  /** Aborted when the client has gone away (RunContext.signal). */
  signal?: AbortSignal,
): Promise<Outcome> {
  const action = actionOf(request);
  const authorization = await deps.authorizer.authorize({ table, action, user, schema });
  // An upsert meets existing rows through the update policy (merge) or the read policy (ignore).
  const meeting =
    request.kind === 'create' && request.upsert !== undefined
      ? await deps.authorizer.authorize({
          table,
          action: request.upsert.resolution === 'merge' ? 'update' : 'read',
          user,
          schema,
        })
      : undefined;
  if (authorization.kind === 'deny') throw policyDenied(user, table.name, authorization.reason);
  const ctx: Ctx = {
    deps,
    table,
    user,
    run: { user, action, table: table.name, signal },
    predicate: authorization.kind === 'filter' ? authorization.predicate : undefined,
    check: authorization.kind === 'filter' ? authorization.check : undefined,
    guard: authorization.guard,
    columns: authorization.columns,
  };
  refuseHidden(user, table.name, readColumns(ctx), namedColumns(request));
  switch (request.kind) {
    case 'list':
    case 'get':
    case 'count':
      return read(ctx, request);
    case 'create':
      return create(ctx, request, meeting);
    case 'update':
      return update(ctx, request);
    case 'delete':
      return remove(ctx, request);
  }
}
