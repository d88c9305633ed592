// Checks judge what the database stores (docs/policy-language.md): the portable path's create/update check is
// evaluated by the database on each row as written — after its coercions, defaults and triggers —
// and handed back as a flag column with the row; here the flags are read and the first failing
// row refuses the request (the caller's transaction then rolls everything back). Where the check
// raises inside its statement instead (plan-write's `raising`), here its error is recognised; and
// a table whose stored rows cannot be found again is refused here too.

import type { AuthUser } from '../../compiler/types.js';
import { internalError, isRestError, type RestError } from '../../errors/rest-error.js';
import type { Row } from '../db/adapter.js';
import { sqlStateOf } from '../db/map-db-error.js';
import { checkFailed, policyDenied, type Rejected } from './denials.js';
import { protectedColumn } from './request-columns.js';

/**
 * The SQLSTATE a raising check (plan-write's `1 / CASE WHEN (<check>) …`) fails its statement
 * with: PostgreSQL's division_by_zero (https://www.postgresql.org/docs/current/errcodes-appendix.html).
 */
const CHECK_FAILED_SQLSTATE = '22012';

export interface StoredJudgement {
  readonly user: AuthUser;
  readonly table: string;
  readonly action: 'create' | 'update';
  /** The flag column's name (see plan-write's StoredCheck). */
  readonly flag: string;
  /** Body keys written under a column rule's condition: flag 2 refuses them (protected_column). */
  readonly columns?: readonly string[];
}

/**
 * What the error of a statement with a raising check means: where the check ended the statement,
 * the policy refused a row as written (`rejected`: which one, for a create); any other error is
 * `e` itself.
 */
export const raisedCheckRefusal = (e: unknown, judgement: StoredJudgement, rejected?: Rejected): unknown =>
  isRestError(e) && sqlStateOf(e.cause) === CHECK_FAILED_SQLSTATE
    ? checkFailed(judgement.user, judgement.table, judgement.action, rejected, e)
    : e;

/** Without RETURNING and without a primary key, the rows a write stored cannot be found again. */
export const unverifiable = (user: AuthUser, table: string): RestError =>
  policyDenied(user, table, {
    code: 'policy_check_unverifiable',
    message: `${table} has no primary key, so this database cannot show the rows a write stored to check them against the policy`,
  });

/** The flag of a row the policy lets through but a column rule's condition does not. */
const columnsFailed = (value: unknown): boolean => value === 2 || value === 2n || value === '2';

/** A flag the database set: 1 passes; 0, NULL or anything else fails closed. */
const passed = (value: unknown): boolean => value === 1 || value === 1n || value === '1' || value === true;

/**
 * `rows` without their flag column; throws 403 `policy_check_failed` (401 for an anonymous user)
 * at the first row whose flag is not set. `offset`/`many` place a create's row in its request.
 */
export function judgeStoredRows(
  rows: readonly Row[],
  judgement: StoredJudgement,
  position: { readonly offset: number; readonly many: boolean } = { offset: 0, many: false },
): Row[] {
  const { flag } = judgement;
  return rows.map((row, i) => {
    if (!Object.hasOwn(row, flag)) {
      throw internalError(`the stored row came back without its check column ${flag}`);
    }
    const columns = judgement.columns;
    if (columns !== undefined && columnsFailed(row[flag])) {
      throw protectedColumn(judgement.user, judgement.table, columns.join(', '));
    }
    if (!passed(row[flag])) {
      const rejected =
        judgement.action === 'create' ? { index: position.offset + i, many: position.many } : undefined;
      throw checkFailed(judgement.user, judgement.table, judgement.action, rejected);
    }
    const { [flag]: _flag, ...stored } = row;
    return stored;
  });
}
