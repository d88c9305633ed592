// One table request, PostgREST's path: authorize → plan → render → run (one statement, or one
// transaction with the write guards) → the JSON answer. Database errors arrive mapped, by the
// adapter that ran the statement (runtime/db/<kind>/).

import type { Dialect } from '../../compiler/sql/dialect.js';
import { renderSql, type SqlFragment } from '../../compiler/sql/fragment.js';
import type { AuthUser } from '../../compiler/types.js';
import { internalError, RestError } from '../../errors/rest-error.js';
import type { ColumnInfo, DbSession, Returning, Row, SchemaSnapshot, TableInfo } from '../db/adapter.js';
import type { Authorizer, WriteGuard, WriteRow } from '../enforce/authorizer.js';
import { checkFailed, policyDenied, type Rejected } from '../enforce/denials.js';
import type { RequestRunner, RunContext } from '../enforce/request-runner.js';
import { judgeStoredRows, raisedCheckFailure, type StoredJudgement } from '../enforce/stored-checks.js';
import { selectedColumns } from '../plan/columns.js';
import { planRead, type ReadRequest } from '../plan/plan-read.js';
import {
  checkColumnName,
  deleteStatement,
  fitsOneInsert,
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
import { planCreate, planUpdate, type WriteCapabilities, type WriteDemands } from '../plan/write-plan.js';
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

/** Without RETURNING and without a primary key, the rows a write stored cannot be found again. */
const unverifiable = (ctx: Ctx): RestError =>
  policyDenied(ctx.user, ctx.table.name, {
    code: 'policy_check_unverifiable',
    message: `${ctx.table.name} has no primary key, so this database cannot show the rows a write stored to check them against the policy`,
  });

/** The check of this write as a flag column, when the authorizer gave one. */
function storedShape(ctx: Ctx, columns: readonly ColumnInfo[], raising = false): StoredShape {
  return ctx.check === undefined
    ? { columns }
    : { columns, check: { name: checkColumnName(ctx.table), predicate: ctx.check, raising } };
}

/**
 * A write whose check fails inside its statement (`raising`, PostgreSQL) needs no transaction of
 * its own: one statement, its COMMIT in the same round trip. Its failure is the policy's 401/403
 * (which row of a several-row create failed, the one statement does not tell).
 */
async function oneStatement<T>(
  ctx: Ctx,
  action: 'create' | 'update',
  fn: (s: DbSession) => Promise<T>,
  rejected?: Rejected,
): Promise<T> {
  try {
    return await ctx.deps.runner.run(ctx.run, 'single', fn);
  } catch (e) {
    if (ctx.check !== undefined && raisedCheckFailure(e)) {
      throw checkFailed(ctx.user, ctx.table.name, action, rejected, e);
    }
    throw e;
  }
}

const capabilities = (ctx: Ctx): WriteCapabilities => ({
  returning: ctx.deps.returning,
  checkInStatement: ctx.deps.dialect.checkInStatement,
  manyRowInsert: ctx.deps.dialect.manyRowInsert,
});

const demands = (ctx: Ctx): WriteDemands => ({
  check: ctx.check !== undefined,
  checksStoredRows: ctx.guard?.checkStoredRows !== undefined,
  preparesPatch: ctx.guard?.preparePatch !== undefined,
});

const judgement = (ctx: Ctx, shape: StoredShape, action: 'create' | 'update'): StoredJudgement | undefined =>
  shape.check === undefined
    ? undefined
    : { user: ctx.user, table: ctx.table.name, action, flag: shape.check.name };

const wants = (shape: StoredShape): boolean => shape.columns.length > 0 || shape.check !== undefined;

/** Inserts `rows` in one statement and answers with them as stored (with the check's flag), by RETURNING. */
async function insertReturning(
  ctx: Ctx,
  tx: DbSession,
  rows: readonly WriteRow[],
  shape: StoredShape,
): Promise<readonly Row[]> {
  const inserted = await query(ctx, tx, insertStatement(ctx.table, rows, shape, ctx.deps.dialect));
  if (!wants(shape)) return rows.map(() => ({}));
  if (inserted.rows.length !== rows.length) {
    throw internalError(`INSERT … RETURNING gave ${inserted.rows.length} rows for ${rows.length}`);
  }
  return inserted.rows;
}

/** Inserts one row and answers with it as stored (with the check's flag), found by the key the database gave it. */
async function insertOne(ctx: Ctx, tx: DbSession, row: WriteRow, shape: StoredShape): Promise<Row> {
  const { table } = ctx;
  const { dialect } = ctx.deps;
  if (ctx.deps.returning.insert || !wants(shape)) {
    const [stored = {}] = await insertReturning(ctx, tx, [row], shape);
    return stored;
  }
  const inserted = await query(ctx, tx, insertStatement(table, [row], undefined, dialect));
  const where = insertedKeyWhere(table, row, inserted.insertId, dialect);
  if (where === undefined) {
    if (shape.check !== undefined) throw unverifiable(ctx);
    // Nothing to judge, but no way to read the row back: answer with the values written.
    return pick(row, shape.columns);
  }
  const [stored, ...more] = (await query(ctx, tx, storedRowsStatement(table, where, shape, dialect))).rows;
  if (stored === undefined || more.length > 0)
    throw internalError('the inserted row could not be read back by its key');
  return stored;
}

async function create(ctx: Ctx, request: CreateRequest): Promise<HandlerResult> {
  const { guard, table } = ctx;
  const rows = request.rows.map((r) => toWriteRow(table, r));
  const selected = selectedColumns(table, request.select);
  // An empty array creates nothing and needs no statement.
  if (rows.length === 0) return { status: 201, body: [] };
  const many = rows.length > 1;
  // A guard that judges stored rows needs every column it may read, whatever `select` asks for.
  const checkStored = guard?.checkStoredRows;
  const plan = planCreate(capabilities(ctx), demands(ctx), {
    rows: rows.length,
    fitsOneStatement: fitsOneInsert(table, rows),
  });
  const single = plan.kind === 'one-statement';
  const shape = storedShape(
    ctx,
    checkStored === undefined ? selected : selectedColumns(table, undefined),
    single,
  );
  const judge = judgement(ctx, shape, 'create');
  if (single) {
    const stored = await oneStatement(
      ctx,
      'create',
      async (s) => {
        const prepared = guard?.prepareCreate === undefined ? rows : await guard.prepareCreate(rows, s);
        return insertReturning(ctx, s, prepared, shape);
      },
      many ? { many } : { index: 0, many },
    );
    const judged = judge === undefined ? stored : judgeStoredRows(stored, judge, { offset: 0, many });
    const body = judged.map((row) => pick(row, selected));
    return { status: 201, body: request.many ? body : body[0] };
  }
  const created = await ctx.deps.runner.run(ctx.run, 'transaction', async (tx) => {
    const prepared = guard?.prepareCreate === undefined ? rows : await guard.prepareCreate(rows, tx);
    const stored: Row[] = [];
    for (const [index, written] of prepared.entries()) {
      const row = await insertOne(ctx, tx, written, shape);
      stored.push(...(judge === undefined ? [row] : judgeStoredRows([row], judge, { offset: index, many })));
    }
    await checkStored?.(stored, tx);
    return stored.map((row) => pick(row, selected));
  });
  return { status: 201, body: request.many ? created : created[0] };
}

/**
 * Updates the rows `where` selects and hands them back as stored, with the check's flag: by
 * RETURNING, or (MySQL) by locking their keys first, updating exactly those and reading them back.
 */
async function updateStored(
  ctx: Ctx,
  tx: DbSession,
  patch: WriteRow,
  where: SqlFragment,
  shape: StoredShape,
): Promise<{ readonly count: number; readonly stored: readonly Row[] }> {
  const { table } = ctx;
  const { dialect } = ctx.deps;
  if (ctx.deps.returning.update) {
    const { rows } = await query(ctx, tx, updateStatement(table, patch, where, shape, dialect));
    return { count: rows.length, stored: rows };
  }
  if (table.primaryKey.length === 0) throw unverifiable(ctx);
  const keys = (await query(ctx, tx, lockedKeysStatement(table, where, dialect))).rows;
  const before = keyedWhere(table, keys, dialect);
  const after = keyedWhere(table, patchedKeys(table, keys, patch), dialect);
  if (before === undefined || after === undefined) throw unverifiable(ctx);
  const { rowCount } = await query(ctx, tx, updateStatement(table, patch, before, undefined, dialect));
  const stored = (await query(ctx, tx, storedRowsStatement(table, after, shape, dialect))).rows;
  if (stored.length !== keys.length)
    throw internalError('the updated rows could not be read back by their keys');
  return { count: rowCount, stored };
}

async function update(ctx: Ctx, request: UpdateRequest): Promise<HandlerResult> {
  const { table, guard } = ctx;
  const { dialect } = ctx.deps;
  const patch = toWriteRow(table, request.patch);
  const where = whereClause(
    { table, key: request.key, filters: request.filters, predicate: ctx.predicate },
    dialect,
  );
  const checkStored = guard?.checkStoredRows;
  const plan = planUpdate(capabilities(ctx), demands(ctx));
  let updated: number;

  if (plan.kind === 'plain') {
    const result = await ctx.deps.runner.run(ctx.run, 'single', (s) =>
      query(ctx, s, updateStatement(table, patch, where, undefined, dialect)),
    );
    updated = result.rowCount;
  } else if (plan.kind === 'one-statement') {
    // A check fails inside the UPDATE (its RETURNING carries the passed flags): one statement.
    const shape = storedShape(ctx, [], true);
    const judge = judgement(ctx, shape, 'update');
    const result = await oneStatement(ctx, 'update', async (s) => {
      const applied = guard?.preparePatch === undefined ? patch : await guard.preparePatch(patch, s);
      return query(ctx, s, updateStatement(table, applied, where, shape, dialect));
    });
    // Without a check there is no RETURNING: the count is the rows the UPDATE changed.
    if (judge !== undefined) judgeStoredRows(result.rows, judge);
    updated = judge === undefined ? result.rowCount : result.rows.length;
  } else {
    const shape = storedShape(ctx, checkStored === undefined ? [] : selectedColumns(table, undefined));
    const judge = judgement(ctx, shape, 'update');
    updated = await ctx.deps.runner.run(ctx.run, 'transaction', async (tx) => {
      const applied = guard?.preparePatch === undefined ? patch : await guard.preparePatch(patch, tx);
      if (checkStored === undefined && judge === undefined) {
        return (await query(ctx, tx, updateStatement(table, applied, where, undefined, dialect))).rowCount;
      }
      const { count, stored } = await updateStored(ctx, tx, applied, where, shape);
      const judged = judge === undefined ? stored : judgeStoredRows(stored, judge);
      await checkStored?.(judged, tx);
      return count;
    });
  }
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
