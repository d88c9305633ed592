// The native-RLS request runner: each request is one pipelined transaction of the PostgreSQL
// adapter (PgAdapter.pipelined: the opening statement and the request's statement in one round
// trip, with one Sync for a single statement — one implicit transaction, no BEGIN or COMMIT; the
// adapter owns the client's lifecycle) whose opening statement switches to the
// request role, sets every rest.* setting and checks that RLS is in force on the table as
// generated. What is left here is the meaning: that statement, its values, and how its failures
// and a policy's refusal (42501) are answered.

import { rlsPolicyNames } from '../../compiler/rls/compile-rls.js';
import {
  ACTION_SWITCH_SQL,
  SESSION_SETTINGS,
  TABLE_SETTING,
  sessionSettingValues,
} from '../../compiler/rls/session-settings.js';
import { postgresDialect } from '../../compiler/sql/postgres-dialect.js';
import { postgresLiteral } from '../../compiler/sql/fragment.js';
import type { AuthUser } from '../../compiler/types.js';
import { RestError } from '../../errors/rest-error.js';
import { sqlStateOf } from '../db/map-db-error.js';
import type { PgAdapter } from '../db/postgres/pg-adapter.js';
import { mapPgError } from '../db/postgres/pg-errors.js';
import { checkFailed, policyDenied } from '../enforce/denials.js';
import type { DbSession, RunMode } from '../db/adapter.js';
import type { RequestRunner, RunContext } from '../enforce/request-runner.js';

export interface NativeRunnerOptions {
  /** The PostgreSQL adapter whose pipelined transactions the requests run in. */
  readonly adapter: PgAdapter;
  /** The NOLOGIN role requests run as (runtime/rls/request-role.ts). */
  readonly role: string;
  /** The stamp of a table's generated policies as last seen (runtime/rls/reconcile.ts policyStamp). */
  readonly stampOf?: (table: string) => string | undefined;
  /** Called when a request found RLS not in force on its table (it was refused with 503). */
  readonly onNotInForce?: (table: string) => void;
  /**
   * Called when a request's check failed while it carried `stale` (no stamp: undefined): reads the
   * table's generated policies again and resolves with their stamp if they are all there, intact
   * and stamped otherwise than `stale` (another process regenerated them) — the request is then
   * sent once more with it. Without it, or when it resolves undefined, the request is refused.
   */
  readonly restamp?: (table: string, stale: string | undefined) => Promise<string | undefined>;
  /**
   * Whether a request on `table` must be planned for its own parameter values: true when the
   * table's policies have subqueries (see `settingsFor`).
   */
  readonly customPlans?: (table: string) => boolean;
}

// set_config('role', …, true) is SET LOCAL ROLE with the role as a bound value
// (https://www.postgresql.org/docs/current/functions-admin.html#FUNCTIONS-ADMIN-SET); every
// value is transaction-local, so COMMIT or ROLLBACK resets them before the client is reused.
//
// The same statement then checks that RLS is in force as rest generated it. row_security_active is
// false for a superuser, a BYPASSRLS role or an owner without FORCE
// (https://www.postgresql.org/docs/current/functions-info.html). The generated policies must be
// those rest created, none dropped or altered by hand: any change to a policy writes a new row
// version of pg_policy, so the statement counts the table's policies whose xmin is the stamp last
// seen (no join, nothing to parse). The stamp is taken only from policies that are all there and
// carry the stamp of their own xmin in their comment (runtime/rls/reconcile.ts); when another
// process regenerated them, the count fails and the runner asks `restamp` for the new stamp before
// it sends the request once more — the check itself never admits anything but the stamp. A failure
// is a division by zero (22012) that aborts the transaction before the statement that follows in
// the pipeline can read or write anything. A target list is evaluated in order, so the check runs
// after the role switch; it is STABLE with a parameter, so the planner never evaluates it early.
// Were it ever evaluated before the switch it would see the login role (the owner) and refuse every
// request, never admit one.
//
// The statement names the table itself (a subquery planned to read nothing: `WHERE false` is a
// one-time filter, no scan to start) so that it takes the table's ACCESS SHARE lock, as the login
// role, before the check runs: DDL that changes policies or RLS takes ACCESS EXCLUSIVE, so it either
// committed before the check (which then sees it) or waits until this transaction ends — it can
// never land between the check and the request's statement.
//
// rest.table (TABLE_SETTING) comes last: a table that another table's subquery reads shows that
// subquery its read policy (compiler/rls/compile-rls.ts).
const SETTINGS = [...SESSION_SETTINGS, TABLE_SETTING];
const STAMP_PARAM = SETTINGS.length + 2;
const GENERATED = rlsPolicyNames('').length;
const settingsSql = new Map<string, string>();

// A policy with a subquery (`team_id = ANY (ARRAY(SELECT …))`) is fast only when PostgreSQL plans
// the statement knowing how many rows it needs: a generic plan that guesses a large share walks
// the primary key through the RLS filter, 4–5× slower than the index on the policy's column
// (BENCHMARKS.md, team membership). A read writes its page size as a literal (plan-read.ts), so a
// first-page read without filters has no parameter and its one generic plan knows it; a statement
// with parameters (filters, later pages, writes) on such a table is planned for its own values
// (plan_cache_mode, transaction-local like the rest). Other tables keep the generic plan.
const CUSTOM_PLANS = `, set_config('plan_cache_mode', 'force_custom_plan', true)`;

/**
 * The settings statement for `table` (memoised): role, rest.* settings, custom plans where asked,
 * the table lock and the check.
 */
function settingsFor(table: string, customPlans: boolean): string {
  const key = customPlans ? `+${table}` : table;
  let text = settingsSql.get(key);
  if (text !== undefined) return text;
  const relation = `${postgresLiteral(postgresDialect.quoteIdent(table))}::regclass`;
  // The policies counted as the length of an ARRAY(…) rather than with count(*): the same number,
  // and without an aggregate to plan, the statement costs PostgreSQL about a sixth less to plan,
  // which it does for every request through a transaction pooler (unnamed statements).
  const stamped = `cardinality(ARRAY(SELECT 1 FROM pg_catalog.pg_policy p WHERE p.polrelid = ${relation} AND p.xmin = $${STAMP_PARAM}::xid)) = ${GENERATED}`;
  text = `SELECT set_config('role', $1, true), ${SETTINGS.map((s, i) => `set_config(${postgresLiteral(s.name)}, $${i + 2}, true)`).join(', ')}${customPlans ? CUSTOM_PLANS : ''},
  (SELECT true FROM ONLY ${postgresDialect.quoteIdent(table)} WHERE false) AS table_locked,
  1 / (row_security_active(${relation}) AND ${stamped})::int AS rls_in_force`;
  settingsSql.set(key, text);
  return text;
}
const DIVISION_BY_ZERO = '22012';

const rlsNotInForce = (table: string, cause: unknown): RestError =>
  new RestError(
    'rls_not_enforced',
    `row-level security is not in force on ${table} as rest generated it; the request was refused`,
    { cause },
  );

/** 42501 from a policy's WITH CHECK (or a missing grant): refused like any policy denial. */
function policyRefusal(context: RunContext, cause: unknown): RestError {
  const { user, table, action } = context;
  if (action === 'create' || action === 'update') return checkFailed(user, table, action, undefined, cause);
  return policyDenied(user, table, {
    code: 'policy_check_failed',
    message: `the policy of ${table} does not allow this`,
    cause,
  });
}

/** The values of the settings statement for this request, in the order of its parameters. */
const settingValues = (
  role: string,
  user: AuthUser,
  context: RunContext,
  stamp: string | undefined,
): string[] => [
  role,
  ...sessionSettingValues(user, context.action, context.table).map((s) => s.value),
  // xid 0 is no transaction's id: the stamp check falls through to the comments.
  stamp ?? '0',
];

/** A request whose check failed: RLS not in force, or policies not stamped as the request expected. */
class CheckFailed extends Error {
  constructor(readonly failure: unknown) {
    super('the row-level security check failed');
  }
}

/** A failure of the settings and check: the request never reached its statement. */
function openingFailure(e: unknown): unknown {
  const mapped = mapPgError(e);
  if (mapped.category === 'unavailable') return mapped;
  if (sqlStateOf(e) === DIVISION_BY_ZERO) return new CheckFailed(e);
  return new RestError('rls_setup_failed', 'the request could not be set up for row-level security', {
    cause: e,
  });
}

export function createNativeRunner(options: NativeRunnerOptions): RequestRunner {
  const { adapter, role } = options;
  const stampOf = options.stampOf ?? (() => undefined);
  const customPlans = options.customPlans ?? (() => false);
  const restamp = options.restamp ?? (() => Promise.resolve(undefined));
  const attempt = <T>(
    context: RunContext,
    mode: RunMode,
    fn: (session: DbSession) => Promise<T>,
    stamp: string | undefined,
  ): Promise<T> =>
    adapter.pipelined(
      {
        opening: [
          {
            text: settingsFor(context.table, customPlans(context.table)),
            values: settingValues(role, context.user, context, stamp),
          },
        ],
        mode,
        signal: context.signal,
        openingError: openingFailure,
        statementError: (e) => (sqlStateOf(e) === '42501' ? policyRefusal(context, e) : undefined),
      },
      fn,
    );
  const refused = (table: string, e: CheckFailed): RestError => {
    options.onNotInForce?.(table);
    return rlsNotInForce(table, e.failure);
  };
  return {
    switchAction: async (session, context) => {
      await session.query({ text: ACTION_SWITCH_SQL, values: [context.action] });
    },
    run: async (context, mode, fn) => {
      const stamp = stampOf(context.table);
      try {
        return await attempt(context, mode, fn, stamp);
      } catch (e) {
        if (!(e instanceof CheckFailed)) throw e;
        const fresh = await restamp(context.table, stamp);
        if (fresh === undefined || fresh === stamp) throw refused(context.table, e);
        try {
          return await attempt(context, mode, fn, fresh);
        } catch (again) {
          throw again instanceof CheckFailed ? refused(context.table, again) : again;
        }
      }
    },
  };
}
