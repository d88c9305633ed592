// The policy cache of a server process, bound to its database: rows read from `auth_policies`
// (none before setup), compiled for the database's dialect, changes heard through
// PostgreSQL's `rest_policies` NOTIFY (sql/002_policies_notify.sql) or by polling elsewhere, and
// what is wrong with the rows logged once.

import { compilePolicySet, type PolicySet } from '../../compiler/policy-set.js';
import type { PolicyRow } from '../../compiler/types.js';
import { quoteValue } from '../../errors/quote-value.js';
import { AUTH_POLICIES_TABLE } from '../auth/auth-ddl.js';
import type { DbAdapter, SchemaSnapshot } from '../db/adapter.js';
import { databaseChangeSource, type ChangeSource } from '../db/change-source.js';
import {
  createPolicyCache,
  type PolicyCache,
  type PolicyCacheLogger,
  type PolicySnapshot,
} from './policy-cache.js';
import { brokenPolicies, listPolicies } from './policy-service.js';
import { indexedColumns, relationProblems } from './relation-health.js';

/** The cache's own warnings, and the error lines of broken policy rows. */
export interface PolicyHealthLogger extends PolicyCacheLogger {
  error(fields: Readonly<Record<string, unknown>>, message: string): void;
}

/** The NOTIFY channel of sql/002_policies_notify.sql. */
export const POLICY_CHANNEL = 'rest_policies';

export interface DatabasePolicyCacheDeps {
  readonly adapter: DbAdapter;
  /** A URL for PostgreSQL's dedicated LISTEN connection; undefined: PostgreSQL is polled too. */
  readonly url: string | undefined;
  readonly schema: {
    refresh(): Promise<SchemaSnapshot>;
    /** The cached snapshot (version-checked); the health report reads it when given. */
    get?(): Promise<SchemaSnapshot>;
  };
  readonly logger?: PolicyHealthLogger;
  /** Poll interval on MySQL/MariaDB and SQLite (default 1 s). */
  readonly pollIntervalMs?: number;
}

/** Every policy row; none while `auth_policies` does not exist (auth not set up yet). */
export function policyLoader(
  adapter: DbAdapter,
  schema: { refresh(): Promise<SchemaSnapshot> },
): () => Promise<readonly PolicyRow[]> {
  return async () => {
    try {
      return await listPolicies(adapter);
    } catch (e) {
      if ((await schema.refresh()).tables.has(AUTH_POLICIES_TABLE)) throw e;
      return [];
    }
  };
}

export const policyChangeSource = (deps: DatabasePolicyCacheDeps): ChangeSource =>
  databaseChangeSource(deps, POLICY_CHANNEL);

/**
 * Reports once per process what is wrong with the stored policies. Broken rows (a row that no longer
 * parses, names a missing table or column…: edited by hand, or the schema changed under it) are
 * logged at error level, one line per row naming its id, table, action and the error; they allow
 * nothing (the compiler treats them as FALSE). Relation problems (relation-health.ts) are warnings:
 * rows on a cycle (they deny too) and subqueries on unindexed columns. Checked on the first load,
 * which starts at once, and on every change; only sets with subqueries cost a look at the indexes.
 */
function reportPolicyHealth(
  cache: PolicyCache<PolicySet>,
  deps: DatabasePolicyCacheDeps,
  logger: PolicyHealthLogger,
): { close(): void } {
  const reported = new Set<string>();
  let closed = false;
  const once = (key: string): boolean => {
    if (closed || reported.has(key)) return false;
    reported.add(key);
    return true;
  };
  const check = async ({ rows, compiled }: PolicySnapshot<PolicySet>): Promise<void> => {
    if (rows.length === 0) return;
    // The cached snapshot, not a fresh introspection on every policy change: a report in the
    // background must not add catalog reads beside every policy write.
    const schema = await (deps.schema.get === undefined ? deps.schema.refresh() : deps.schema.get());
    const broken = brokenPolicies(rows, schema);
    for (const row of rows) {
      const problem = broken.get(row.id);
      // Cycles are reported below, once per cycle rather than once per row.
      if (problem === undefined || problem.kind === 'cycle') continue;
      const { id, table_name, action, expression } = row;
      if (!once(JSON.stringify(['broken', id, table_name, action, expression, problem.message]))) continue;
      logger.error(
        { policy_id: id, table_name, action, expression, error: problem.message },
        `policy ${id} (table ${quoteValue(table_name)}, action ${quoteValue(action)}) is broken and allows nothing until it is fixed: ${problem.message}`,
      );
    }
    if (compiled.subqueryTables.size === 0) return;
    const problems = relationProblems(compiled, schema, await indexedColumns(deps.adapter, schema));
    for (const problem of problems) {
      if (!once(problem.message)) continue;
      const { message, ...fields } = problem;
      logger.warn(fields, message);
    }
  };
  const failed = (e: unknown): void => {
    if (!closed)
      logger.warn({ err: e instanceof Error ? e.message : String(e) }, 'checking the stored policies failed');
  };
  const unsubscribe = cache.subscribe((snapshot) => void check(snapshot).catch(failed));
  cache.get().catch(failed);
  return {
    close: () => {
      closed = true;
      unsubscribe();
    },
  };
}

export function createDatabasePolicyCache(deps: DatabasePolicyCacheDeps): PolicyCache<PolicySet> {
  const { dialect } = deps.adapter;
  const cache = createPolicyCache({
    load: policyLoader(deps.adapter, deps.schema),
    compile: (rows) => compilePolicySet(rows, dialect),
    changes: policyChangeSource(deps),
    ...(deps.logger === undefined ? {} : { logger: deps.logger }),
  });
  if (deps.logger === undefined) return cache;
  const health = reportPolicyHealth(cache, deps, deps.logger);
  return {
    ...cache,
    close: async () => {
      health.close();
      await cache.close();
    },
  };
}
