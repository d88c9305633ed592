// The policy seam: a handler asks the Authorizer how (table, action, user) may proceed — allow,
// deny, or a row predicate — and gets write guards that run inside the write's transaction.
// Only the "public" implementation (auth disabled) lives here.

import type { SqlFragment } from '../../compiler/sql/fragment.js';
import type { Action, AuthUser } from '../../compiler/types.js';
import type { ErrorDetails } from '../../errors/rest-error.js';
import type { DbSession, Row, TableInfo } from '../db/adapter.js';

/** Column values of one row to write, validated against the schema (JSON columns hold JS values). */
export type WriteRow = Readonly<Record<string, unknown>>;

/** A row of a create request after its insert. */
export interface CreatedRow {
  /** What was inserted (after prepareCreate). */
  readonly written: WriteRow;
  /** The row as the database stored it. */
  readonly stored: Row;
  /** Its position in the request, and how many rows the request creates. */
  readonly index: number;
  readonly count: number;
}

export interface AuthorizationRequest {
  readonly table: TableInfo;
  readonly action: Action;
  readonly user: AuthUser;
}

/**
 * Hooks of a granted write, each called inside the transaction of the write with its session;
 * throwing (a RestError, e.g. 403) rolls the whole request back.
 */
export interface WriteGuard {
  /** create: returns the rows to insert (e.g. owner columns filled) after checking each one. */
  prepareCreate?(rows: readonly WriteRow[], tx: DbSession): Promise<readonly WriteRow[]>;
  /**
   * create: one row just inserted, as stored (database defaults included), before the next is
   * inserted. Giving this hook makes every insert return all columns the request may read.
   */
  checkCreatedRow?(created: CreatedRow, tx: DbSession): Promise<void>;
  /** update: returns the patch to apply (e.g. a password replaced by its hash). */
  preparePatch?(patch: WriteRow, tx: DbSession): Promise<WriteRow>;
  /**
   * update: every row the update will change, as it will be (row read under lock, then the patch
   * applied), before the UPDATE runs. Giving this hook costs a locked read per update.
   */
  checkUpdatedRows?(rows: readonly Row[], tx: DbSession): Promise<void>;
}

export interface DenyReason {
  /** Default: `unauthenticated` (401) for an anonymous user, `forbidden` (403) otherwise. */
  readonly category?: 'unauthenticated' | 'forbidden';
  readonly code?: string;
  readonly message?: string;
  readonly details?: ErrorDetails;
}

export type Authorization =
  | { readonly kind: 'allow'; readonly guard?: WriteGuard }
  /** `predicate` is AND-ed into the WHERE of read, read_mine, update and delete (not create). */
  | { readonly kind: 'filter'; readonly predicate: SqlFragment; readonly guard?: WriteGuard }
  | { readonly kind: 'deny'; readonly reason?: DenyReason };

export interface Authorizer {
  authorize(request: AuthorizationRequest): Authorization | Promise<Authorization>;
}

const ALLOW: Authorization = Object.freeze({ kind: 'allow' });

/** Auth disabled: every table endpoint is public and policies are ignored (SPEC §3.2). */
export const publicAuthorizer: Authorizer = Object.freeze({ authorize: () => ALLOW });
