// One table request, PostgREST's path: authorize → plan → render → run (one statement, or one
// transaction with the write guards) → the JSON answer. Each action reads as plan → run → answer;
// a write's plan (plan/write-plan.ts) says whether it is one statement or a transaction and how
// its stored rows come back to be judged. Database errors arrive mapped, by the adapter that ran
// the statement (runtime/db/<kind>/).

import type { Dialect } from '../../compiler/sql/dialect.js';
import { renderSql, type SqlFragment } from '../../compiler/sql/fragment.js';
import type { AuthUser } from '../../compiler/types.js';
import { internalError, RestError } from '../../errors/rest-error.js';
import type { ColumnInfo, DbSession, Returning, Row, SchemaSnapshot, TableInfo } from '../db/adapter.js';
import type { Authorizer, WriteGuard, WriteRow } from '../enforce/authorizer.js';
import { policyDenied, type Rejected } from '../enforce/denials.js';
import type { RequestRunner, RunContext } from '../enforce/request-runner.js';
import {
  judgeStoredRows,
  raisedCheckRefusal,
  unverifiable,
  type StoredJudgement,
} from '../enforce/stored-checks.js';
import { selectedColumns } from '../plan/columns.js';
import { planRead, type ReadRequest } from '../plan/plan-read.js';
import {
  deleteStatement,
  hasOutput,
  insertedKeyWhere,
  insertStatement,
  keyedWhere,
  lockedKeysStatement,
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
  type WriteCapabilities,
  type WritePlan,
  type WritePolicy,
} from '../plan/write-plan.js';
import { actionOf, type ParsedRequest } from '../request/types.js';

export interface TableHandlerDeps {
  readonly dialect: Dialect;
  /** Which writes hand back their stored rows in the same statement (the adapter's). */
  readonly returning: Returning;
  readonly authorizer: Authorizer;
  readonly runner: RequestRunner;
}

export interface HandlerResult {
  readonly status: number;
  readonly body: unknown;
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
}

const notFound = (table: string): RestError => new RestError('not_found', `no such row in ${table}`);

async function query(ctx: Ctx, session: DbSession, statement: SqlFragment) {
  return session.query(renderSql(ctx.deps.dialect, statement, ctx.user));
}

async function read(ctx: Ctx, request: ReadRequest): Promise<HandlerResult> {
  const plan = planRead(request, ctx.table, ctx.predicate, ctx.deps.dialect);
  const result = await ctx.deps.runner.run(ctx.run, 'single', (s) => query(ctx, s, plan.statement));
  switch (plan.shape) {
    case 'rows':
      return { status: 200, body: result.rows };
    case 'row': {
      const row = result.rows[0];
      if (row === undefined) throw notFound(ctx.table.name);
      return { status: 200, body: row };
    }
    case 'count':
      return { status: 200, body: { count: Number(result.rows[0]?.['count'] ?? 0) } };
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

const writePolicy = (ctx: Ctx): WritePolicy => ({
  check: ctx.check,
  checksStoredRows: ctx.guard?.checkStoredRows !== undefined,
  preparesPatch: ctx.guard?.preparePatch !== undefined,
});

const judgementOf = (ctx: Ctx, action: WriteAction, stored: StoredShape): StoredJudgement | undefined =>
  stored.check === undefined
    ? undefined
    : { user: ctx.user, table: ctx.table.name, action, flag: stored.check.name };

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
): Promise<readonly Row[]> {
  const many = rows.length > 1;
  return ctx.deps.runner.run(ctx.run, 'transaction', async (tx) => {
    const stored: Row[] = [];
    for (const [index, row] of (await prepareCreate(ctx, rows, tx)).entries()) {
      const written =
        plan.readBack === 'by-key'
          ? await insertReadBack(ctx, tx, row, plan.stored)
          : await insertReturning(ctx, tx, [row], plan.stored);
      stored.push(...judged(ctx, 'create', plan.stored, written, { offset: index, many }));
    }
    await ctx.guard?.checkStoredRows?.(stored, tx);
    return stored;
  });
}

const runCreate = (ctx: Ctx, plan: WritePlan, rows: readonly WriteRow[]): Promise<readonly Row[]> =>
  plan.kind === 'one-statement'
    ? createInOneStatement(ctx, plan.stored, rows)
    : createInTransaction(ctx, plan, rows);

async function create(ctx: Ctx, request: CreateRequest): Promise<HandlerResult> {
  const rows = request.rows.map((r) => toWriteRow(ctx.table, r));
  const selected = selectedColumns(ctx.table, request.select);
  // An empty array creates nothing and needs no statement.
  if (rows.length === 0) return { status: 201, body: [] };
  const plan = planCreate({
    capabilities: capabilities(ctx.deps),
    policy: writePolicy(ctx),
    table: ctx.table,
    rows,
    selected,
  });
  const body = (await runCreate(ctx, plan, rows)).map((row) => pick(row, selected));
  return { status: 201, body: request.many ? body : body[0] };
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
): Promise<number> {
  const result = await oneStatement(ctx, 'update', stored, async (s) =>
    query(
      ctx,
      s,
      updateStatement(ctx.table, await preparePatch(ctx, patch, s), where, stored, ctx.deps.dialect),
    ),
  );
  // The statement ended at a failing row; the flags are read anyway, so that a missing one fails closed.
  judged(ctx, 'update', stored, result.rows);
  return hasOutput(stored) ? result.rows.length : result.rowCount;
}

async function updateInTransaction(
  ctx: Ctx,
  plan: TransactionPlan,
  patch: WriteRow,
  where: SqlFragment,
): Promise<number> {
  return ctx.deps.runner.run(ctx.run, 'transaction', async (tx) => {
    const applied = await preparePatch(ctx, patch, tx);
    if (plan.readBack === 'none') {
      return (await query(ctx, tx, updateStatement(ctx.table, applied, where, undefined, ctx.deps.dialect)))
        .rowCount;
    }
    const { count, stored } =
      plan.readBack === 'in-statement'
        ? await updateReturning(ctx, tx, applied, where, plan.stored)
        : await updateReadBack(ctx, tx, applied, where, plan.stored);
    const rows = judged(ctx, 'update', plan.stored, stored);
    await ctx.guard?.checkStoredRows?.(rows, tx);
    return count;
  });
}

const runUpdate = (ctx: Ctx, plan: WritePlan, patch: WriteRow, where: SqlFragment): Promise<number> =>
  plan.kind === 'one-statement'
    ? updateInOneStatement(ctx, plan.stored, patch, where)
    : updateInTransaction(ctx, plan, patch, where);

async function update(ctx: Ctx, request: UpdateRequest): Promise<HandlerResult> {
  const { table } = ctx;
  const patch = toWriteRow(table, request.patch);
  const where = whereClause(
    { table, key: request.key, filters: request.filters, predicate: ctx.predicate },
    ctx.deps.dialect,
  );
  const plan = planUpdate({ capabilities: capabilities(ctx.deps), policy: writePolicy(ctx), table });
  const updated = await runUpdate(ctx, plan, patch, where);
  if (request.key !== undefined && updated === 0) throw notFound(table.name);
  return { status: 200, body: { updated } };
}

async function remove(ctx: Ctx, request: DeleteRequest): Promise<HandlerResult> {
  const { table } = ctx;
  const { dialect } = ctx.deps;
  const where = whereClause(
    { table, key: request.key, filters: request.filters, predicate: ctx.predicate },
    dialect,
  );
  const result = await ctx.deps.runner.run(ctx.run, 'single', (s) =>
    query(ctx, s, deleteStatement(table, where, dialect)),
  );
  if (request.key !== undefined && result.rowCount === 0) throw notFound(table.name);
  return { status: 200, body: { deleted: result.rowCount } };
}

export async function handleTableRequest(
  deps: TableHandlerDeps,
  request: ParsedRequest,
  table: TableInfo,
  user: AuthUser,
  schema: SchemaSnapshot,
): Promise<HandlerResult> {
  const action = actionOf(request);
  const authorization = await deps.authorizer.authorize({ table, action, user, schema });
  if (authorization.kind === 'deny') throw policyDenied(user, table.name, authorization.reason);
  const ctx: Ctx = {
    deps,
    table,
    user,
    run: { user, action, table: table.name },
    predicate: authorization.kind === 'filter' ? authorization.predicate : undefined,
    check: authorization.kind === 'filter' ? authorization.check : undefined,
    guard: authorization.guard,
  };
  switch (request.kind) {
    case 'list':
    case 'get':
    case 'count':
      return read(ctx, request);
    case 'create':
      return create(ctx, request);
    case 'update':
      return update(ctx, request);
    case 'delete':
      return remove(ctx, request);
  }
}
