// One table request, PostgREST's path: authorize → plan → render → run (one statement, or one
// transaction with the write guards) → the JSON answer. Database errors are mapped once, here.

import type { Dialect } from '../../compiler/sql/dialect.js';
import { renderSql, type SqlFragment } from '../../compiler/sql/fragment.js';
import type { AuthUser } from '../../compiler/types.js';
import { isRestError, RestError } from '../../errors/rest-error.js';
import type { ColumnInfo, DbSession, Row, TableInfo } from '../db/adapter.js';
import { mapDbError } from '../db/map-db-error.js';
import type { Authorizer, DenyReason, WriteGuard, WriteRow } from '../plan/authorizer.js';
import { selectedColumns } from '../plan/columns.js';
import { planRead, type ReadRequest } from '../plan/plan-read.js';
import {
  deleteStatement,
  insertStatement,
  keyedWhere,
  lockedRowsStatement,
  selectInsertedStatement,
  toWriteRow,
  updateStatement,
} from '../plan/plan-write.js';
import type { QueryDialect } from '../plan/query-dialect.js';
import { whereClause } from '../plan/where.js';
import { actionOf, type ParsedRequest } from '../request/types.js';
import type { RequestRunner, RunContext } from './request-runner.js';

export interface TableHandlerDeps {
  readonly dialect: Dialect;
  readonly queryDialect: QueryDialect;
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
  readonly guard: WriteGuard | undefined;
}

export function deniedError(user: AuthUser, table: string, reason: DenyReason = {}): RestError {
  const category = reason.category ?? (user.is_authenticated ? 'forbidden' : 'unauthenticated');
  const details = reason.details === undefined ? {} : { details: reason.details };
  if (category === 'unauthenticated') {
    return new RestError(
      'unauthenticated',
      reason.code ?? 'unauthenticated',
      reason.message ?? `log in to access ${table}`,
      {
        ...details,
        headers: { 'WWW-Authenticate': 'Bearer' },
      },
    );
  }
  return new RestError(
    'forbidden',
    reason.code ?? 'forbidden',
    reason.message ?? `you are not allowed to do this on ${table}`,
    details,
  );
}

const notFound = (table: string): RestError =>
  new RestError('not_found', 'not_found', `no such row in ${table}`);

async function query(ctx: Ctx, session: DbSession, statement: SqlFragment) {
  return session.query(renderSql(ctx.deps.dialect, statement, ctx.user));
}

async function read(ctx: Ctx, request: ReadRequest): Promise<HandlerResult> {
  const plan = planRead(request, ctx.table, ctx.predicate, ctx.deps.dialect, ctx.deps.queryDialect);
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

async function insertOne(
  ctx: Ctx,
  tx: DbSession,
  row: WriteRow,
  columns: readonly ColumnInfo[],
): Promise<Row> {
  const { table } = ctx;
  const { dialect, queryDialect: qd } = ctx.deps;
  const inserted = await query(ctx, tx, insertStatement(table, row, columns, dialect, qd));
  if (qd.returning) return inserted.rows[0] ?? {};
  const readBack = selectInsertedStatement(table, row, inserted.insertId, columns, dialect, qd);
  const stored = readBack === undefined ? undefined : (await query(ctx, tx, readBack)).rows[0];
  // Without RETURNING and without a known key the stored row cannot be read back: answer with
  // the values that were written.
  return stored ?? pick(row, columns);
}

async function create(ctx: Ctx, request: CreateRequest): Promise<HandlerResult> {
  const { guard, table } = ctx;
  const rows = request.rows.map((r) => toWriteRow(table, r));
  const selected = selectedColumns(table, request.select);
  // A guard that judges stored rows needs every column it may read, whatever `select` asks for.
  const check = guard?.checkCreatedRow;
  const returned = check === undefined ? selected : selectedColumns(table, undefined);
  const created = await ctx.deps.runner.run(ctx.run, 'transaction', async (tx) => {
    const prepared = guard?.prepareCreate === undefined ? rows : await guard.prepareCreate(rows, tx);
    const out: Row[] = [];
    for (const [index, written] of prepared.entries()) {
      const stored = await insertOne(ctx, tx, written, returned);
      await check?.({ written, stored, index, count: prepared.length }, tx);
      out.push(check === undefined ? stored : pick(stored, selected));
    }
    return out;
  });
  return { status: 201, body: request.many ? created : created[0] };
}

async function update(ctx: Ctx, request: UpdateRequest): Promise<HandlerResult> {
  const { table, guard } = ctx;
  const { dialect, queryDialect: qd } = ctx.deps;
  const patch = toWriteRow(table, request.patch);
  const where = whereClause(
    { table, key: request.key, filters: request.filters, predicate: ctx.predicate },
    dialect,
    qd,
  );
  let updated: number;
  if (guard?.preparePatch === undefined && guard?.checkUpdatedRows === undefined) {
    const result = await ctx.deps.runner.run(ctx.run, 'single', (s) =>
      query(ctx, s, updateStatement(table, patch, where, dialect, qd)),
    );
    updated = result.rowCount;
  } else {
    updated = await ctx.deps.runner.run(ctx.run, 'transaction', async (tx) => {
      const applied = guard.preparePatch === undefined ? patch : await guard.preparePatch(patch, tx);
      let target = where;
      if (guard.checkUpdatedRows !== undefined) {
        const before = (await query(ctx, tx, lockedRowsStatement(table, where, dialect, qd))).rows;
        await guard.checkUpdatedRows(
          before.map((row) => ({ ...row, ...applied })),
          tx,
        );
        target = keyedWhere(table, before, dialect, qd) ?? where;
      }
      return (await query(ctx, tx, updateStatement(table, applied, target, dialect, qd))).rowCount;
    });
  }
  if (request.key !== undefined && updated === 0) throw notFound(table.name);
  return { status: 200, body: { updated } };
}

async function remove(ctx: Ctx, request: DeleteRequest): Promise<HandlerResult> {
  const { table } = ctx;
  const { dialect, queryDialect: qd } = ctx.deps;
  const where = whereClause(
    { table, key: request.key, filters: request.filters, predicate: ctx.predicate },
    dialect,
    qd,
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
): Promise<HandlerResult> {
  const action = actionOf(request);
  const authorization = await deps.authorizer.authorize({ table, action, user });
  if (authorization.kind === 'deny') throw deniedError(user, table.name, authorization.reason);
  const ctx: Ctx = {
    deps,
    table,
    user,
    run: { user, action, table: table.name },
    predicate: authorization.kind === 'filter' ? authorization.predicate : undefined,
    guard: authorization.guard,
  };
  try {
    switch (request.kind) {
      case 'list':
      case 'get':
      case 'count':
        return await read(ctx, request);
      case 'create':
        return await create(ctx, request);
      case 'update':
        return await update(ctx, request);
      case 'delete':
        return await remove(ctx, request);
    }
  } catch (e) {
    throw isRestError(e) ? e : mapDbError(e);
  }
}
