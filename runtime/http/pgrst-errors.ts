// The PostgREST dialect's error answers (docs/postgrest.md): PostgREST's flat body
// `{"code","message","details","hint"}` where `code` is what PostgREST's clients know where one
// applies, and `details` starts with rest's own stable code.

import type { ErrorCode } from '../../errors/error-codes.js';
import type { RestError } from '../../errors/rest-error.js';

export const PGRST_PREFIX = '/rest/v1';

export const isPgrstPath = (path: string): boolean =>
  path === PGRST_PREFIX || path.startsWith(`${PGRST_PREFIX}/`);

export interface PgrstErrorBody {
  readonly code: string;
  readonly message: string;
  readonly details: string;
  readonly hint: string | null;
}

const UNPARSABLE = 'PGRST100';
const DENIED = '42501';

const PGRST_CODES: Partial<Readonly<Record<ErrorCode, string>>> = {
  invalid_query: UNPARSABLE,
  invalid_parameter: UNPARSABLE,
  invalid_filter: UNPARSABLE,
  invalid_select: UNPARSABLE,
  invalid_order: UNPARSABLE,
  invalid_page: UNPARSABLE,
  missing_filter: UNPARSABLE,
  unsupported_feature: UNPARSABLE,
  invalid_json: 'PGRST102',
  json_too_deep: 'PGRST102',
  invalid_body: 'PGRST102',
  offset_out_of_range: 'PGRST103',
  unsupported_profile: 'PGRST106',
  not_acceptable: 'PGRST107',
  singular_mismatch: 'PGRST116',
  invalid_preference: 'PGRST122',
  too_many_affected: 'PGRST124',
  unknown_table: 'PGRST205',
  invalid_token: 'PGRST301',
  unauthenticated: DENIED,
  forbidden: DENIED,
  owner_mismatch: DENIED,
  protected_column: DENIED,
  hidden_column: DENIED,
  policy_column_missing: DENIED,
  policy_check_failed: DENIED,
  policy_check_unverifiable: DENIED,
  unique_violation: '23505',
  foreign_key_violation: '23503',
  not_null_violation: '23502',
  check_violation: '23514',
  invalid_value: '22P02',
  query_timeout: '57014',
};

/** A statement timeout is 504 here: PostgREST's clients retry a 503, which would run it again. */
export function pgrstStatus(err: RestError): number {
  return err.code === 'query_timeout' ? 504 : err.status;
}

function pgrstCode(err: RestError): string {
  if (err.code === 'unknown_column') return err.details?.['in'] === 'body' ? 'PGRST204' : '42703';
  return PGRST_CODES[err.code] ?? err.code;
}

const HINTS: Partial<Readonly<Record<ErrorCode, string>>> = {
  unsupported_feature: 'read the tables one by one; docs/postgrest.md lists what this version serves',
  unauthenticated: 'log in and send the access token as Authorization: Bearer <token>',
  singular_mismatch: 'drop .single(), or filter down to exactly one row',
};

export function pgrstErrorBody(err: RestError): PgrstErrorBody {
  const details = err.details === undefined ? err.code : `${err.code}: ${JSON.stringify(err.details)}`;
  return { code: pgrstCode(err), message: err.message, details, hint: HINTS[err.code] ?? null };
}

/** The 500 body: no cause, only the request id. */
export function pgrstInternalBody(requestId: string): PgrstErrorBody {
  return {
    code: 'internal',
    message: `internal error (request id ${requestId})`,
    details: `internal: ${JSON.stringify({ request_id: requestId })}`,
    hint: null,
  };
}
