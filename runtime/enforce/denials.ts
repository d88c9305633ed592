// The one rule that turns a policy's refusal into an answer (docs/policy-language.md): 401 with
// `WWW-Authenticate: Bearer` for an anonymous user — logging in may change the answer — and 403
// for a logged-in one. The table handler, both enforcement paths and `policy explain` use it.

import type { AuthUser } from '../../compiler/types.js';
import type { ErrorCode } from '../../errors/error-codes.js';
import { RestError, type ErrorDetails } from '../../errors/rest-error.js';

export interface DenyReason {
  /** Default `unauthenticated` for an anonymous user, `forbidden` otherwise. */
  readonly code?: ErrorCode;
  readonly message?: string;
  readonly details?: ErrorDetails;
  readonly cause?: unknown;
}

/** The HTTP status a refusal gets for `user`. */
export const denialStatus = (user: AuthUser): 401 | 403 => (user.is_authenticated ? 403 : 401);

export function policyDenied(user: AuthUser, table: string, reason: DenyReason = {}): RestError {
  const options = {
    ...(reason.details === undefined ? {} : { details: reason.details }),
    ...(reason.cause === undefined ? {} : { cause: reason.cause }),
  };
  if (!user.is_authenticated) {
    return new RestError(reason.code ?? 'unauthenticated', reason.message ?? `log in to access ${table}`, {
      ...options,
      category: 'unauthenticated',
      headers: { 'WWW-Authenticate': 'Bearer' },
    });
  }
  return new RestError(
    reason.code ?? 'forbidden',
    reason.message ?? `you are not allowed to do this on ${table}`,
    {
      ...options,
      category: 'forbidden',
    },
  );
}

/** create: the refused row, by its index in the request's array when that is known. */
export interface Rejected {
  /** Unknown when one statement wrote several rows (it does not tell which one failed). */
  readonly index?: number;
  readonly many: boolean;
}

function refusalMessage(table: string, action: 'create' | 'update', rejected: Rejected | undefined): string {
  if (action === 'update') return `the change would make a row of ${table} break its policy`;
  if (rejected?.many !== true) return `a new row is not allowed by the policy of ${table}`;
  return rejected.index === undefined
    ? `a row of the request is not allowed by the policy of ${table}; none was written`
    : `the row at index ${rejected.index} is not allowed by the policy of ${table}`;
}

/** A written row the policy's check refuses (docs/policy-language.md: nothing is written). */
export function checkFailed(
  user: AuthUser,
  table: string,
  action: 'create' | 'update',
  rejected: Rejected | undefined,
  cause?: unknown,
): RestError {
  const index = rejected?.many === true ? rejected.index : undefined;
  return policyDenied(user, table, {
    code: 'policy_check_failed',
    message: refusalMessage(table, action, rejected),
    ...(index === undefined ? {} : { details: { index } }),
    ...(cause === undefined ? {} : { cause }),
  });
}
