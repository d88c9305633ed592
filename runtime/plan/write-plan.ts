// How a create or an update runs, decided once from what the database can do and what the policy
// asks: the table handler then runs the plan and answers, PostgREST's plan → run → answer.
//
// - `one-statement`: one INSERT/UPDATE, its own transaction, RETURNING what the answer and the
//   check need. A check fails the statement itself where a row fails it (`raising`), so a COMMIT
//   in the same round trip writes nothing. PostgreSQL's dialect can; one round trip.
// - `transaction`: BEGIN … COMMIT around the write (one INSERT per row, or the UPDATE) and the
//   read-back of the rows it stored, whose flags are judged inside it. Needed without RETURNING
//   (MySQL), without a raising check (SQLite, MariaDB), for a guard that prepares a patch or reads
//   the stored rows, and for a batch one statement cannot hold.

import type { SqlFragment } from '../../compiler/sql/fragment.js';
import type { ColumnInfo, Returning, TableInfo } from '../db/adapter.js';
import type { WriteRow } from '../enforce/authorizer.js';
import { columnOf } from './columns.js';
import type { Masks } from './masked-columns.js';
import {
  checkColumnName,
  fitsOneInsert,
  hasOutput,
  type ColumnCheck,
  type StoredShape,
} from './plan-write.js';

/** What the database and its dialect can do for a write. */
export interface WriteCapabilities {
  /** Which writes hand back their stored rows in the same statement (the adapter's). */
  readonly returning: Returning;
  /** A check can fail its own statement (the dialect's `checkInStatement`). */
  readonly checkInStatement: boolean;
  /** Several rows in one INSERT (the dialect's `manyRowInsert`). */
  readonly manyRowInsert: boolean;
}

/** What the policy asks of a write. */
export interface WritePolicy {
  /** What the rows as stored must satisfy (the authorizer's check), evaluated by the database. */
  readonly check: SqlFragment | undefined;
  /** A write guard reads every row as stored before the commit (the auth tables' guards). */
  readonly checksStoredRows: boolean;
  /** A write guard rewrites an update's patch, in the update's session. */
  readonly preparesPatch: boolean;
  /** The caller's masked columns (read rules), handed back masked in the answer. */
  readonly masks?: Masks;
  /** Body keys written under a column rule's condition, judged on the stored rows (never raising). */
  readonly columnCheck?: ColumnCheck;
}

export interface CreateInput {
  readonly capabilities: WriteCapabilities;
  readonly policy: WritePolicy;
  readonly table: TableInfo;
  /** The validated rows of the request (at least one). */
  readonly rows: readonly WriteRow[];
  /** The columns the answer shows (`select`). */
  readonly selected: readonly ColumnInfo[];
  /** The request needs a transaction of its own (it may be rolled back after the write). */
  readonly transact?: boolean;
}

export interface UpdateInput {
  readonly capabilities: WriteCapabilities;
  readonly policy: WritePolicy;
  readonly table: TableInfo;
  /** The columns the answer shows; none when it is a count. */
  readonly selected?: readonly ColumnInfo[];
  /** The request needs a transaction of its own (it may be rolled back after the write). */
  readonly transact?: boolean;
}

/** How a transaction has the rows its write stored handed back. */
export type ReadBack =
  /** Nothing reads them: the write's row count answers. */
  | 'none'
  /** By the write's own RETURNING. */
  | 'in-statement'
  /**
   * By a SELECT on their primary keys: an inserted row's key as the database reports it, an
   * update's rows' keys locked before the UPDATE.
   */
  | 'by-key';

export type WritePlan =
  /** `stored`: what the statement's RETURNING hands back (nothing when it has no columns and no check). */
  | { readonly kind: 'one-statement'; readonly stored: StoredShape }
  | { readonly kind: 'transaction'; readonly stored: StoredShape; readonly readBack: ReadBack };

/** What every row passes, in every dialect: the policy's half of a check of columns alone. */
const NO_CHECK: SqlFragment = Object.freeze({
  parts: Object.freeze([{ kind: 'text' as const, text: '1 = 1' }]),
});

/** The stored rows' columns, and the check as a flag column when the policy has one. */
export function storedShape(
  table: TableInfo,
  policy: WritePolicy,
  columns: readonly ColumnInfo[],
  raising: boolean,
): StoredShape {
  const { masks } = policy;
  const shape = masks === undefined ? { columns } : { columns, masks };
  const { check, columnCheck } = policy;
  if (columnCheck !== undefined) {
    const predicate = check ?? NO_CHECK;
    return { ...shape, check: { name: checkColumnName(table), predicate, columns: columnCheck } };
  }
  return check === undefined
    ? shape
    : { ...shape, check: { name: checkColumnName(table), predicate: check, raising } };
}

/** A guard that judges stored rows finds them by their primary key, whatever `select` asks for. */
function guardedColumns(input: UpdateInput, otherwise: readonly ColumnInfo[]): readonly ColumnInfo[] {
  if (!input.policy.checksStoredRows) return otherwise;
  const missing = input.table.primaryKey.filter((name) => !otherwise.some((c) => c.name === name));
  return [...otherwise, ...missing.map((name) => columnOf(input.table, name, 'select'))];
}

const inTransaction = (stored: StoredShape, returns: boolean): WritePlan => ({
  kind: 'transaction',
  stored,
  readBack: !hasOutput(stored) ? 'none' : returns ? 'in-statement' : 'by-key',
});

export function planCreate(input: CreateInput): WritePlan {
  const { capabilities: caps, policy, rows } = input;
  const columns = guardedColumns(input, input.selected);
  const oneStatement =
    input.transact !== true &&
    policy.columnCheck === undefined &&
    !policy.checksStoredRows &&
    caps.returning.insert &&
    (policy.check === undefined || caps.checkInStatement) &&
    (rows.length <= 1 || (caps.manyRowInsert && fitsOneInsert(input.table, rows)));
  return oneStatement
    ? { kind: 'one-statement', stored: storedShape(input.table, policy, columns, true) }
    : inTransaction(storedShape(input.table, policy, columns, false), caps.returning.insert);
}

export function planUpdate(input: UpdateInput): WritePlan {
  const { capabilities: caps, policy } = input;
  const selected = input.selected ?? [];
  const columnsJudged = policy.columnCheck !== undefined;
  const nothingToJudge =
    !policy.preparesPatch && !policy.checksStoredRows && policy.check === undefined && !columnsJudged;
  const checkedInStatement =
    !policy.checksStoredRows && !columnsJudged && caps.returning.update && caps.checkInStatement;
  // A count answers from the statement; rows need its RETURNING.
  const answersInStatement = selected.length === 0 || caps.returning.update;
  return input.transact !== true && (nothingToJudge || checkedInStatement) && answersInStatement
    ? { kind: 'one-statement', stored: storedShape(input.table, policy, selected, true) }
    : inTransaction(
        storedShape(input.table, policy, guardedColumns(input, selected), false),
        caps.returning.update,
      );
}
