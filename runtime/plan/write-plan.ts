// How a create or an update runs, decided once from what the database can do and what the policy
// asks: the table handler then runs the plan and answers, PostgREST's plan → run → answer.
//
// - `one-statement`: one INSERT/UPDATE … RETURNING, its own transaction; a policy check fails the
//   statement itself where a row fails it (`raising`), so a COMMIT in the same round trip writes
//   nothing. PostgreSQL's dialect can; one round trip.
// - `transaction`: BEGIN … COMMIT around one statement per row (or the lock / update / read-back
//   of an update), the stored rows' flags judged inside it. Needed without RETURNING (MySQL),
//   without a raising check (SQLite, MariaDB), for a guard that reads the stored rows, and for a
//   batch too large for one statement.
// - `plain` (update only): no check and no guard — one UPDATE that only counts its rows.

import type { Returning } from '../db/adapter.js';

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
export interface WriteDemands {
  /** The authorizer gave a check the rows as stored must satisfy. */
  readonly check: boolean;
  /** A write guard reads the rows as stored (the auth tables' guards). */
  readonly checksStoredRows: boolean;
  /** A guard rewrites the patch before an update (it needs the update's session). */
  readonly preparesPatch: boolean;
}

export type WritePlan =
  { readonly kind: 'plain' } | { readonly kind: 'one-statement' } | { readonly kind: 'transaction' };

export interface CreateShape {
  readonly rows: number;
  /** The rows fit one INSERT (the protocol's bound on parameters). */
  readonly fitsOneStatement: boolean;
}

export function planCreate(caps: WriteCapabilities, demands: WriteDemands, shape: CreateShape): WritePlan {
  const oneStatement =
    !demands.checksStoredRows &&
    caps.returning.insert &&
    (!demands.check || caps.checkInStatement) &&
    (shape.rows <= 1 || (caps.manyRowInsert && shape.fitsOneStatement));
  return { kind: oneStatement ? 'one-statement' : 'transaction' };
}

export function planUpdate(caps: WriteCapabilities, demands: WriteDemands): WritePlan {
  if (!demands.preparesPatch && !demands.checksStoredRows && !demands.check) return { kind: 'plain' };
  if (!demands.checksStoredRows && caps.returning.update && caps.checkInStatement) {
    return { kind: 'one-statement' };
  }
  return { kind: 'transaction' };
}
