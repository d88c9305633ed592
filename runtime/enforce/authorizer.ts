// The policy seam: a handler asks the Authorizer how (table, action, user) may proceed — allow,
// deny, or a row predicate — and gets the write's check (judged by the database on the rows as
// stored) and guards that run inside the write's transaction. Only the "public" implementation
// (auth disabled) lives here.

import type { PolicySet } from '../../compiler/policy-set.js';
import type { SqlFragment } from '../../compiler/sql/fragment.js';
import type { Action, AuthUser } from '../../compiler/types.js';
import type { DbSession, Row, SchemaSnapshot, TableInfo } from '../db/adapter.js';
import type { DenyReason } from './denials.js';
import type { RequestColumns } from './request-columns.js';

/** Column values of one row to write, validated against the schema (JSON columns hold JS values). */
export type WriteRow = Readonly<Record<string, unknown>>;

/** Where the enforcement paths read the compiled policies (the policy cache). */
export interface PolicySource {
  get(): Promise<{ readonly compiled: PolicySet }>;
}

export interface AuthorizationRequest {
  readonly table: TableInfo;
  readonly action: Action;
  readonly user: AuthUser;
  /** The schema `table` belongs to: subqueries of policies read its other tables (docs/policy-language.md). */
  readonly schema: SchemaSnapshot;
}

/**
 * Hooks of a granted write, each called with the session the write runs on; throwing (a
 * RestError, e.g. 403) rolls the whole request back. A write that is one statement (a create
 * without `checkStoredRows`, an update) has no transaction around its hooks: they run before
 * its statement and must not write.
 */
export interface WriteGuard {
  /** create: returns the rows to insert (e.g. owner columns filled) after checking each one. */
  prepareCreate?(rows: readonly WriteRow[], tx: DbSession): Promise<readonly WriteRow[]>;
  /** update: returns the patch to apply (e.g. a password replaced by its hash). */
  preparePatch?(patch: WriteRow, tx: DbSession): Promise<WriteRow>;
  /**
   * create/update: every written row as the database stored it (defaults, coercions, triggers;
   * every column, none masked), read again by its primary key before the transaction commits. A
   * table without a primary key cannot be guarded so: its writes are refused.
   */
  checkStoredRows?(rows: readonly Row[], tx: DbSession): Promise<void>;
}

export type Authorization =
  | {
      readonly kind: 'allow';
      readonly guard?: WriteGuard;
      /** The column rules of the request (docs/policy-language.md); none: every column. */
      readonly columns?: RequestColumns;
    }
  | {
      readonly kind: 'filter';
      /** AND-ed into the WHERE of read, read_mine, update and delete (not create). */
      readonly predicate: SqlFragment;
      /**
       * create/update: every row as stored must satisfy it; the database evaluates it inside the
       * write's transaction and a failing row rolls the request back (docs/policy-language.md).
       */
      readonly check?: SqlFragment;
      readonly guard?: WriteGuard;
      readonly columns?: RequestColumns;
    }
  | { readonly kind: 'deny'; readonly reason?: DenyReason };

export interface Authorizer {
  authorize(request: AuthorizationRequest): Authorization | Promise<Authorization>;
}

const ALLOW: Authorization = Object.freeze({ kind: 'allow' });

/** Auth disabled: every table endpoint is public and policies are ignored (docs/http-api.md). */
export const publicAuthorizer: Authorizer = Object.freeze({ authorize: () => ALLOW });
