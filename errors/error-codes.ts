// The registry of every error code `rest` gives: each code's category — hence its HTTP status and
// CLI exit code (errors/rest-error.ts) — and its meaning, from which the documentation's error
// table is rendered (errors/error-table.ts). `new RestError(code, …)` takes its category from here.
// A code that is no longer given moves to RETIRED_CODES and is never reused for something else
// (PostgREST's rule).

export type ErrorCategory =
  | 'usage'
  | 'invalid_input'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'method_not_allowed'
  | 'not_acceptable'
  | 'conflict'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'range_not_satisfiable'
  | 'rate_limited'
  | 'unavailable'
  | 'internal';

/**
 * A policy's refusal: `unauthenticated` (401, `WWW-Authenticate: Bearer`) for an anonymous user and
 * `forbidden` (403) for a logged-in one. Codes registered with these categories are given only
 * through `policyDenied` and `checkFailed` (runtime/enforce/denials.ts), which apply that rule.
 */
export const POLICY_DENIAL = ['unauthenticated', 'forbidden'] as const;

export interface ErrorCodeEntry {
  /** The category, or the categories when the call site chooses among them (POLICY_DENIAL). */
  readonly category: ErrorCategory | readonly ErrorCategory[];
  /** One line for the documentation's error table, in the user's words. */
  readonly meaning: string;
}

export const ERROR_CODES = {
  // usage: 400, exit 1
  usage: {
    category: 'usage',
    meaning: 'the command line cannot be parsed: unknown command or flag, missing argument',
  },
  invalid_arguments: {
    category: 'usage',
    meaning:
      "arguments that do not go together: `policy explain`'s (`--user`, `--admin`, `--anonymous`, `--claims`, `--row`), `policy test --path native` on a database other than PostgreSQL",
  },
  invalid_config: {
    category: 'usage',
    meaning: 'a setting (flag, `REST_*` variable or `rest.yml` key) has a bad value',
  },
  invalid_db_url: { category: 'usage', meaning: 'the database URL cannot be used' },
  db_url_mismatch: {
    category: 'usage',
    meaning: 'the database URL is for another kind of database than the adapter',
  },
  empty_secret: { category: 'usage', meaning: '`auth.secret` is given but empty' },
  weak_secret: { category: 'usage', meaning: '`auth.secret` is shorter than the minimum' },
  weak_bcrypt_cost: {
    category: 'usage',
    meaning: 'the bcrypt cost is not an integer from the minimum to 31',
  },
  invalid_token_ttl: { category: 'usage', meaning: 'a token lifetime is not a positive number of seconds' },
  auth_not_configured: {
    category: 'usage',
    meaning:
      'the database has `auth_users` but no `auth.secret` is configured (and auth is not switched off)',
  },
  secret_required: {
    category: 'usage',
    meaning: '`rest auth anon-key` without an `auth.secret` to sign the key with',
  },
  rls_needs_postgres: { category: 'usage', meaning: '`-db.rls on` on a database other than PostgreSQL' },
  rls_distributed: {
    category: 'usage',
    meaning:
      '`-db.rls on` on Citus, whose worker nodes do not see transaction-local settings: use `-db.rls off`',
  },
  nothing_to_change: { category: 'usage', meaning: '`auth policy edit` without anything to change' },
  cancelled: { category: 'usage', meaning: 'the password prompt ended without a password' },

  // invalid_input: 400, exit 2
  invalid_json: { category: 'invalid_input', meaning: 'the body is empty, not UTF-8 or not JSON' },
  json_too_deep: { category: 'invalid_input', meaning: 'the body is nested deeper than the limit' },
  invalid_body: {
    category: 'invalid_input',
    meaning: 'the body lacks a field the endpoint needs, or has one it does not take',
  },
  invalid_path: { category: 'invalid_input', meaning: 'the path is not valid percent-encoding' },
  invalid_query: {
    category: 'invalid_input',
    meaning: 'the query string is not UTF-8 after percent-decoding',
  },
  invalid_parameter: {
    category: 'invalid_input',
    meaning:
      'a query parameter is repeated, has a value it takes none of, or is not accepted by this request',
  },
  missing_filter: {
    category: 'invalid_input',
    meaning: 'an update or delete names neither a key nor a filter',
  },
  invalid_filter: {
    category: 'invalid_input',
    meaning: 'a filter whose operator or value cannot be used on its column',
  },
  invalid_select: { category: 'invalid_input', meaning: '`select` is not a list of column names' },
  invalid_order: {
    category: 'invalid_input',
    meaning: '`order` is not a list of `column[.asc|.desc][.nullsfirst|.nullslast]`',
  },
  invalid_page: { category: 'invalid_input', meaning: '`page` or `page_size` is not an integer in range' },
  unknown_column: {
    category: 'invalid_input',
    meaning: 'the table has no such column (secret columns read as unknown)',
  },
  unsupported_key: {
    category: 'invalid_input',
    meaning: '`/<table>/<key>` or `--row` on a table without a single-column primary key',
  },
  invalid_value: { category: 'invalid_input', meaning: "a value does not fit its column's type or range" },
  not_null_violation: { category: 'invalid_input', meaning: 'a required value is missing or null' },
  check_violation: { category: 'invalid_input', meaning: 'a value breaks a check constraint of the table' },
  invalid_username: { category: 'invalid_input', meaning: 'the username breaks the username rules' },
  invalid_password: { category: 'invalid_input', meaning: 'the password breaks the password rules' },
  invalid_policy: {
    category: 'invalid_input',
    meaning: 'a policy that does not parse or validate (with line:column), or a bad policy field',
  },
  invalid_policy_id: { category: 'invalid_input', meaning: 'a policy id that is not a positive integer' },
  invalid_action: { category: 'invalid_input', meaning: 'an action other than create, read, update, delete' },
  invalid_is_admin: {
    category: 'invalid_input',
    meaning: '`auth user add`: is_admin is neither true nor false',
  },
  invalid_row_key: {
    category: 'invalid_input',
    meaning: '`policy explain --row`: the value is not a valid key of the table',
  },
  unsupported_feature: {
    category: 'invalid_input',
    meaning:
      'the PostgREST dialect: a feature this version does not serve (embedding, RPC, full-text, ranges, JSON paths, casts)',
  },
  invalid_preference: {
    category: 'invalid_input',
    meaning: 'the PostgREST dialect: a `Prefer` value rest does not know, or one the request cannot use',
  },
  too_many_affected: {
    category: 'invalid_input',
    meaning: 'the PostgREST dialect: more rows would change than `Prefer: max-affected`; nothing written',
  },
  passwords_differ: { category: 'invalid_input', meaning: 'the two passwords typed at the prompt differ' },

  // unauthenticated: 401, exit 2
  unauthenticated: {
    category: 'unauthenticated',
    meaning: 'log in first: no token, and the endpoint or the policy needs one',
  },
  invalid_token: {
    category: 'unauthenticated',
    meaning:
      'the token is missing its Bearer scheme, malformed, expired, badly signed or its session revoked',
  },
  invalid_credentials: { category: 'unauthenticated', meaning: 'wrong username or password' },

  // forbidden: 403, exit 2
  forbidden: {
    category: 'forbidden',
    meaning: 'a policy (or the database, SQLSTATE 42501) refuses a logged-in user',
  },
  owner_mismatch: { category: 'forbidden', meaning: "a new row's owner column is not the user's own id" },
  protected_column: {
    category: POLICY_DENIAL,
    meaning:
      'a body sets a column no policy lets the caller write on this row, or a non-admin writes `id`, `password` or `is_admin` of `auth_users`; nothing is written (an anonymous user gets `unauthenticated`)',
  },
  hidden_column: {
    category: POLICY_DENIAL,
    meaning:
      '`select`, a filter, `order` or `on_conflict` names a column the policies hide from the caller (an anonymous user gets `unauthenticated`)',
  },
  policy_column_missing: {
    category: POLICY_DENIAL,
    meaning: 'the policy reads a column the table does not have (an anonymous user gets `unauthenticated`)',
  },

  // POLICY_DENIAL: 401 for an anonymous user, 403 for a logged-in one; exit 2
  policy_check_failed: {
    category: POLICY_DENIAL,
    meaning: 'the policy refuses a row as written; nothing is written',
  },
  policy_check_unverifiable: {
    category: POLICY_DENIAL,
    meaning:
      'a write on a table without a primary key whose stored rows cannot be checked against the policy',
  },

  // not_found: 404, exit 2
  not_found: { category: 'not_found', meaning: 'no such endpoint, or no such row' },
  unknown_table: { category: 'not_found', meaning: 'no such table' },
  invalid_test_file: {
    category: 'invalid_input',
    meaning: '`policy test`: the test file is malformed or names an unknown user, table or invalid policy',
  },
  unknown_user: { category: 'not_found', meaning: 'no such user' },
  unknown_policy: { category: 'not_found', meaning: 'no such policy id' },
  unknown_row: { category: 'not_found', meaning: '`policy explain --row`: no row has this key' },
  auth_disabled: { category: 'not_found', meaning: 'an `/auth/` endpoint while auth is off' },

  // method_not_allowed: 405, exit 1
  method_not_allowed: { category: 'method_not_allowed', meaning: 'the method is not allowed on this path' },

  // not_acceptable: 406, exit 2
  not_acceptable: {
    category: 'not_acceptable',
    meaning: 'the PostgREST dialect: `Accept` names no media type rest answers',
  },
  singular_mismatch: {
    category: 'not_acceptable',
    meaning:
      'the PostgREST dialect: one row was asked for (`vnd.pgrst.object+json`) and zero or several came',
  },
  unsupported_profile: {
    category: 'not_acceptable',
    meaning:
      "the PostgREST dialect: `Accept-Profile`/`Content-Profile` names a schema other than the database's",
  },

  // conflict: 409, exit 2
  unique_violation: { category: 'conflict', meaning: 'a row with the same unique value already exists' },
  foreign_key_violation: {
    category: 'conflict',
    meaning: 'the row refers to a row that does not exist, or other rows still refer to it',
  },
  username_taken: { category: 'conflict', meaning: 'the username is already taken' },
  already_setup: { category: 'conflict', meaning: 'auth is already set up' },
  table_exists: { category: 'conflict', meaning: '`rest example`: the example table already exists' },
  not_setup: {
    category: 'conflict',
    meaning: 'auth is not set up on this database: run `rest auth setup` first',
  },

  // payload_too_large: 413, exit 2
  payload_too_large: { category: 'payload_too_large', meaning: 'the body is over the size limit (1 MiB)' },
  too_many_rows: {
    category: 'payload_too_large',
    meaning: 'a `POST` array holds more than `-http.max_rows` rows',
  },

  // unsupported_media_type: 415, exit 2
  unsupported_media_type: {
    category: 'unsupported_media_type',
    meaning: 'a write without `Content-Type: application/json`',
  },

  // range_not_satisfiable: 416, exit 2
  offset_out_of_range: {
    category: 'range_not_satisfiable',
    meaning: 'the PostgREST dialect: `offset` lies past the counted rows',
  },

  // rate_limited: 429, exit 3
  too_many_attempts: {
    category: 'rate_limited',
    meaning: 'too many failed logins; try again after `Retry-After` seconds',
  },

  // unavailable: 503, exit 3
  database_unavailable: {
    category: 'unavailable',
    meaning: 'the database cannot be reached or refused the connection',
  },
  query_timeout: {
    category: 'unavailable',
    meaning: 'the statement ran past `-db.statement_timeout` and was cancelled',
  },
  schema_changed: {
    category: 'unavailable',
    meaning:
      'a table or column changed while the request was served (renamed, dropped, retyped); send it again',
  },
  transaction_conflict: {
    category: 'unavailable',
    meaning:
      'the database ended the request in a conflict with another transaction (deadlock, serialization failure, lock wait timeout); send it again',
  },
  overloaded: {
    category: 'unavailable',
    meaning:
      'more requests wait for a database connection than `-db.max_waiting`; send it again after `Retry-After` seconds',
  },
  client_gone: {
    category: 'unavailable',
    meaning:
      'the client closed its connection before the answer: the request was dropped or its statement cancelled (logged, never sent)',
  },
  listen_failed: { category: 'unavailable', meaning: 'the server cannot listen on its address' },
  upgrade_failed: {
    category: 'unavailable',
    meaning: "an older version's auth tables could not be upgraded",
  },
  rls_not_enforced: {
    category: 'unavailable',
    meaning: 'native row-level security is not in force on the table; refused',
  },
  rls_privileges_missing: {
    category: 'unavailable',
    meaning: 'the login role lacks what native row-level security needs',
  },
  rls_role_bypasses: { category: 'unavailable', meaning: 'the request role would bypass row-level security' },

  pooler_needs_listen_url: {
    category: 'usage',
    meaning: 'setting up the auth tables through a transaction pooler needs `-db.listen_url`',
  },
  // at start-up a usage error (exit 1), while serving 503
  transaction_pooler: {
    category: ['usage', 'unavailable'],
    meaning: 'PostgreSQL is reached through a transaction pooler but `-db.pooler transaction` was not given',
  },

  // the worker's own category: `rest serve` relays its exit code
  worker_failed: {
    category: ['usage', 'invalid_input', 'unavailable'],
    meaning:
      '`rest serve` with workers: a worker could not start (its error is printed above); its exit code is kept',
  },

  // internal: 500, exit 3
  internal: {
    category: 'internal',
    meaning: 'a fault of rest or an unexpected database error; the cause is only in the log',
  },
  migration_failed: { category: 'internal', meaning: 'the PostgreSQL migrations could not be applied' },
  rls_setup_failed: { category: 'internal', meaning: 'a request could not be set up for row-level security' },
  unprintable_policy: {
    category: 'internal',
    meaning: 'the policy language cannot write an expression back as text',
  },
} as const satisfies Readonly<Record<string, ErrorCodeEntry>>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The categories a code may be given with. */
export const categoriesOf = (code: ErrorCode): readonly ErrorCategory[] => {
  const { category } = ERROR_CODES[code];
  return typeof category === 'string' ? [category] : category;
};

export interface RetiredCode {
  readonly code: string;
  /** Why it went, and what replaced it. */
  readonly why: string;
}

/** Codes `rest` once gave and no longer does; none may come back with another meaning. */
export const RETIRED_CODES: readonly RetiredCode[] = [];
