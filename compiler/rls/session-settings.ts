// The only home of the `rest.*` session settings that carry auth_user into PostgreSQL for the
// native path: their names, the values the runtime sets per request, and the SQL that reads them.

import type { AuthNode } from '../../grammar/ast.js';
import { NUMERIC_TEXT_PATTERN, usableJson, usableText, type ClaimTarget } from '../semantics.js';
import type { AuthBinding } from '../sql/auth-binding.js';
import { postgresLiteral } from '../sql/fragment.js';
import type { Action, AuthUser } from '../types.js';

export interface SessionSetting {
  readonly name: string;
  /** The text to `set_config(name, value, true)` for this request on `table`. */
  valueOf(user: AuthUser, action: Action, table: string | undefined): string;
}

/** The claims as JSON that PostgreSQL's jsonb accepts: members with unstorable names dropped. */
const claimsText = (claims: AuthUser['claims']): string =>
  JSON.stringify(claims, (key: string, value: unknown) =>
    usableText(key) === null ? undefined : usableJson(value),
  );

// A verified token's claims are one object frozen all the way down (runtime/auth/tokens.ts), shared
// by every request with that token: its text is computed once. Claims not frozen are never kept.
const claimsTexts = new WeakMap<AuthUser['claims'], string>();
function claimsJson(claims: AuthUser['claims']): string {
  let text = claimsTexts.get(claims);
  if (text === undefined) {
    text = claimsText(claims);
    if (Object.isFrozen(claims)) claimsTexts.set(claims, text);
  }
  return text;
}

/**
 * Every setting the runtime sets, in this order, at the start of each request's transaction.
 * `rest.username` is JSON (`"alice"` or `null`) because an empty setting reads back as `''`,
 * which would make an empty username indistinguishable from none.
 */
export const SESSION_SETTINGS: readonly SessionSetting[] = Object.freeze([
  { name: 'rest.user_id', valueOf: (u: AuthUser) => (u.id === null ? '' : String(u.id)) },
  { name: 'rest.username', valueOf: (u: AuthUser) => JSON.stringify(usableText(u.username)) },
  { name: 'rest.is_admin', valueOf: (u: AuthUser) => String(u.is_admin) },
  { name: 'rest.is_authenticated', valueOf: (u: AuthUser) => String(u.is_authenticated) },
  { name: 'rest.claims', valueOf: (u: AuthUser) => claimsJson(u.claims) },
  { name: 'rest.action', valueOf: (_u: AuthUser, action: Action) => action },
]);

/**
 * The request's table, set after SESSION_SETTINGS by a runtime that serves policies with
 * subqueries: a table another table's subquery reads then shows its read policy (compile-rls.ts).
 */
export const TABLE_SETTING: SessionSetting = Object.freeze({
  name: 'rest.table',
  valueOf: (_u: AuthUser, _a: Action, table: string | undefined) => table ?? '',
});

const WITH_TABLE: readonly SessionSetting[] = Object.freeze([...SESSION_SETTINGS, TABLE_SETTING]);

/** `{name, value}` pairs for one request, ready for `set_config`; with `table`, TABLE_SETTING last. */
export function sessionSettingValues(
  user: AuthUser,
  action: Action,
  table?: string,
): readonly { name: string; value: string }[] {
  const settings = table === undefined ? SESSION_SETTINGS : WITH_TABLE;
  return settings.map((s) => ({ name: s.name, value: s.valueOf(user, action, table) }));
}

// current_setting(name, true) is NULL before the first set_config in a session but '' after a
// transaction that set it locally has ended, hence nullif(…, '') before any cast
// (https://www.postgresql.org/docs/current/functions-admin.html#FUNCTIONS-ADMIN-SET).
const read = (name: string): string => `nullif(current_setting('${name}', true), '')`;

/** Each reader is wrapped in `(select …)` so PostgreSQL evaluates it once per statement (InitPlan). */
export const authSettingSql: Readonly<Record<AuthNode['attr'], string>> = {
  id: `(select ${read('rest.user_id')}::bigint)`,
  username: `(select ${read('rest.username')}::jsonb #>> '{}')`,
  is_admin: `(select coalesce(${read('rest.is_admin')}::boolean, false))`,
  is_authenticated: `(select coalesce(${read('rest.is_authenticated')}::boolean, false))`,
};

/** Sets `rest.action` for the rest of the transaction; its one parameter is the action. */
export const ACTION_SWITCH_SQL = "SELECT set_config('rest.action', $1, true)";

/** The request's action; NULL when unset, so that a policy keyed on it denies. */
export const actionSettingSql = `(select ${read('rest.action')})`;

/** The request's table; NULL when unset. */
export const tableSettingSql = `(select ${read('rest.table')})`;

const claimJson = (name: string): string =>
  `(select ${read('rest.claims')}::jsonb -> ${postgresLiteral(name)} as c) as claim`;

/** A claim coerced as compiler/semantics.ts says, evaluated once per statement. */
export function claimSettingSql(name: string, as: ClaimTarget | 'presence'): string {
  const body: Readonly<Record<ClaimTarget | 'presence', string>> = {
    number:
      "case jsonb_typeof(c) when 'number' then c::numeric when 'string' then " +
      `case when (c #>> '{}') ~ ${postgresLiteral(NUMERIC_TEXT_PATTERN)} then (c #>> '{}')::numeric end end`,
    text: "case when jsonb_typeof(c) = 'string' then c #>> '{}' end",
    boolean: "case when jsonb_typeof(c) = 'boolean' then c::boolean end",
    presence: "case when jsonb_typeof(c) <> 'null' then true end",
  };
  return `(select ${body[as]} from ${claimJson(name)})`;
}

/** Native RLS: auth_user and claims read from the request's session settings. */
export const SESSION_BINDING: AuthBinding = Object.freeze<AuthBinding>({
  auth(b, attr) {
    b.append(authSettingSql[attr]);
  },
  claim(b, name, as) {
    b.append(claimSettingSql(name, as));
  },
});
