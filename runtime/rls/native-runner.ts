// The native-RLS request runner: each request is one transaction on a pipelined pg client that
// switches to the request role, sets every rest.* setting and checks that RLS is in force on the
// table as generated (one statement), runs the statement and commits — BEGIN, settings, statement and COMMIT
// written in one TCP segment, so a read costs one round trip. Every path leaves the client idle (no open
// transaction, role reset) before it returns to the pool, or destroys it.

import pg from 'pg';
import { rlsPolicyNames } from '../../compiler/rls/compile-rls.js';
import { SESSION_SETTINGS, sessionSettingValues } from '../../compiler/rls/session-settings.js';
import { postgresDialect } from '../../compiler/sql/dialect.js';
import { postgresLiteral, type RenderedSql } from '../../compiler/sql/fragment.js';
import type { AuthUser } from '../../compiler/types.js';
import { RestError } from '../../errors/rest-error.js';
import type { DbSession, QueryResult, Row } from '../db/adapter.js';
import { mapDbError } from '../db/map-db-error.js';
import { mapPgError } from '../db/pg-adapter.js';
import type { PreparedStatements } from '../db/pg-prepared.js';
import { checkFailed, policyDenied } from '../enforce/denials.js';
import type { RequestRunner, RunContext } from '../enforce/request-runner.js';
import { intactSql } from './reconcile.js';

export interface NativeRunnerOptions {
  /** A pool of `pipeline: true` clients (pg ≥ 8.23), with the adapter's type parsers. */
  readonly pool: pg.Pool;
  /** The adapter's prepared statements: a request's statement is planned once per connection. */
  readonly prepared: PreparedStatements;
  /** The NOLOGIN role requests run as (runtime/rls/request-role.ts). */
  readonly role: string;
  /** The stamp of a table's generated policies as last seen (runtime/rls/reconcile.ts policyStamp). */
  readonly stampOf?: (table: string) => string | undefined;
  /** Called when a request found RLS not in force on its table (it was refused with 503). */
  readonly onNotInForce?: (table: string) => void;
}

// set_config('role', …, true) is SET LOCAL ROLE with the role as a bound value
// (https://www.postgresql.org/docs/current/functions-admin.html#FUNCTIONS-ADMIN-SET); every
// value is transaction-local, so COMMIT or ROLLBACK resets them before the client is reused.
//
// The same statement then checks that RLS is in force as rest generated it. row_security_active is
// false for a superuser, a BYPASSRLS role or an owner without FORCE
// (https://www.postgresql.org/docs/current/functions-info.html). The generated policies must be
// those rest created, none dropped or altered by hand: any change to a policy writes a new row
// version of pg_policy, so the common case counts the table's policies whose xmin is the stamp last
// seen (no join, nothing to parse); only when that fails (another process regenerated them, or
// someone altered one) does the OR evaluate the second count: every generated policy must still
// carry the stamp of its own xmin in its comment (runtime/rls/reconcile.ts). A failure is a
// division by zero (22012) that aborts the transaction before the statement that follows in the
// pipeline can read or write anything. A target list is evaluated in order, so the check runs after
// the role switch; it is STABLE with a parameter, so the planner never evaluates it early. Were it
// ever evaluated before the switch it would see the login role (the owner) and refuse every
// request, never admit one.
//
// The statement names the table itself (a subquery that reads nothing) so that it takes the
// table's ACCESS SHARE lock, as the login role, before the check runs: DDL that changes policies or
// RLS takes ACCESS EXCLUSIVE, so it either committed before the check (which then sees it) or waits
// until this transaction ends — it can never land between the check and the request's statement.
const STAMP_PARAM = SESSION_SETTINGS.length + 2;
const GENERATED = rlsPolicyNames('').length;
const settingsSql = new Map<string, string>();

/** The settings statement for `table` (memoised): role, rest.* settings, the table lock and the check. */
function settingsFor(table: string): string {
  let text = settingsSql.get(table);
  if (text !== undefined) return text;
  const relation = `${postgresLiteral(postgresDialect.quoteIdent(table))}::regclass`;
  const names = rlsPolicyNames(table)
    .map((n) => postgresLiteral(n))
    .join(', ');
  const intact = `((SELECT count(*) FROM pg_catalog.pg_policy p WHERE p.polrelid = ${relation} AND p.xmin = $${STAMP_PARAM}::xid) = ${GENERATED}
  OR (SELECT count(*) FROM pg_catalog.pg_policy p
      JOIN pg_catalog.pg_description d ON d.classoid = 'pg_catalog.pg_policy'::regclass AND d.objoid = p.oid AND d.objsubid = 0
      WHERE p.polrelid = ${relation} AND p.polname IN (${names}) AND ${intactSql('d.description', 'p.xmin')}) = ${GENERATED})`;
  text = `SELECT set_config('role', $1, true), ${SESSION_SETTINGS.map((s, i) => `set_config(${postgresLiteral(s.name)}, $${i + 2}, true)`).join(', ')},
  (SELECT true FROM ONLY ${postgresDialect.quoteIdent(table)} LIMIT 0) AS table_locked,
  1 / (row_security_active(${relation}) AND ${intact})::int AS rls_in_force`;
  settingsSql.set(table, text);
  return text;
}
const DIVISION_BY_ZERO = '22012';

const toResult = (r: pg.QueryResult): QueryResult => ({
  rows: r.rows as Row[],
  rowCount: r.command === 'SELECT' || r.rowCount === null ? r.rows.length : r.rowCount,
});

const sqlStateOf = (e: unknown): string | undefined =>
  e instanceof pg.DatabaseError && typeof e.code === 'string' ? e.code : undefined;

const rlsNotInForce = (table: string, cause: unknown): RestError =>
  new RestError(
    'unavailable',
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

function mapError(e: unknown, context: RunContext): RestError {
  if (sqlStateOf(e) === '42501') return policyRefusal(context, e);
  return mapDbError(mapPgError(e));
}

/**
 * Sends `queries` back to back on a pipelined client. pg corks the socket around each query's
 * own messages; holding an outer cork keeps all of them in one write, hence one network flight.
 */
function pipeline(
  client: pg.PoolClient,
  queries: readonly pg.QueryConfig[],
): Promise<PromiseSettledResult<pg.QueryResult>[]> {
  const { stream } = client.connection;
  stream.cork();
  try {
    return Promise.allSettled(queries.map((query) => client.query(query)));
  } finally {
    stream.uncork();
  }
}

/** The values of the settings statement for this request, in the order of its parameters. */
const settingValues = (
  role: string,
  user: AuthUser,
  context: RunContext,
  stamp: string | undefined,
): string[] => [
  role,
  ...sessionSettingValues(user, context.action).map((s) => s.value),
  // xid 0 is no transaction's id: the stamp check falls through to the comments.
  stamp ?? '0',
];

const asError = (e: unknown): Error => (e instanceof Error ? e : new Error(String(e)));

/** A failure of BEGIN or the settings and check: the request never reached its statement. */
function openingFailure(e: unknown, context: RunContext, options: NativeRunnerOptions): unknown {
  const mapped = mapDbError(e);
  if (mapped.category === 'unavailable') return e;
  if (sqlStateOf(e) === DIVISION_BY_ZERO) {
    options.onNotInForce?.(context.table);
    return rlsNotInForce(context.table, e);
  }
  return new RestError(
    'internal',
    'rls_setup_failed',
    'the request could not be set up for row-level security',
    { cause: e },
  );
}

export function createNativeRunner(options: NativeRunnerOptions): RequestRunner {
  const { pool, prepared, role } = options;
  const stampOf = options.stampOf ?? (() => undefined);

  return {
    async run<T>(
      context: RunContext,
      mode: 'single' | 'transaction',
      fn: (session: DbSession) => Promise<T>,
    ): Promise<T> {
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (e) {
        throw mapError(e, context);
      }
      const c = client;
      /** Set when the connection itself failed (an error without SQLSTATE): destroy, never reuse. */
      let broken: Error | undefined;
      // pg-pool removes its own error listener while a client is checked out; an `error` event
      // (a killed backend) without a listener would crash the process.
      const onError = (e: Error): void => {
        broken ??= e;
      };
      c.on('error', onError);
      const noteFailure = (e: unknown): void => {
        if (sqlStateOf(e) === undefined) broken ??= asError(e);
      };
      const query = async (config: pg.QueryConfig | string): Promise<pg.QueryResult> => {
        try {
          return await c.query(config);
        } catch (e) {
          noteFailure(e);
          throw e;
        }
      };

      const opening: pg.QueryConfig[] = [
        { text: 'BEGIN' },
        prepared.queryFor(c, {
          text: settingsFor(context.table),
          values: settingValues(role, context.user, context, stampOf(context.table)),
        }),
      ];
      const first = async (sql: RenderedSql): Promise<QueryResult> => {
        const closing: pg.QueryConfig[] = mode === 'single' ? [{ text: 'COMMIT' }] : [];
        const statement = prepared.queryFor(c, sql);
        const settled = await pipeline(c, [...opening, statement, ...closing]);
        settled.forEach((s) => s.status === 'rejected' && noteFailure(s.reason));
        const index = settled.findIndex((s) => s.status === 'rejected');
        const failed = settled[index];
        if (failed?.status === 'rejected') {
          if (index < opening.length) throw openingFailure(failed.reason, context, options);
          throw prepared.schemaChanged(failed.reason, statement) ?? failed.reason;
        }
        const result = settled[opening.length];
        if (result?.status !== 'fulfilled') throw new Error('the pipelined statement gave no result');
        return toResult(result.value);
      };

      let statements = 0;
      const session: DbSession = {
        async query(sql) {
          statements += 1;
          if (statements === 1) return first(sql);
          // After a single statement the transaction has committed and the role is reset: a second
          // statement would run as the login role, outside RLS. Never let it.
          if (mode === 'single') {
            throw new RestError('internal', 'internal', 'Internal error.', {
              cause: new Error('a single-statement request ran a second statement'),
            });
          }
          const statement = prepared.queryFor(c, sql);
          try {
            return toResult(await query(statement));
          } catch (e) {
            throw prepared.schemaChanged(e, statement) ?? e;
          }
        },
      };

      try {
        const result = await fn(session);
        if (mode === 'transaction' && statements > 0) await query('COMMIT');
        return result;
      } catch (e) {
        throw e instanceof RestError ? e : mapError(e, context);
      } finally {
        if (broken === undefined && c.getTransactionStatus() !== 'I') {
          try {
            await query('ROLLBACK');
          } catch (e) {
            broken = asError(e);
          }
        }
        c.release(broken ?? prepared.isStale(c));
        c.removeListener('error', onError);
      }
    },
  };
}
