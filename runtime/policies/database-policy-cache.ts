// The policy cache of a server process, bound to its database: rows read from `auth_policies`
// (none before setup), compiled for the database's dialect, and changes heard through
// PostgreSQL's `rest_policies` NOTIFY (sql/002_policies_notify.sql) or by polling elsewhere.

import { compilePolicySet, type PolicySet } from '../../compiler/policy-set.js';
import type { PolicyRow } from '../../compiler/types.js';
import { AUTH_POLICIES_TABLE } from '../auth/auth-ddl.js';
import type { DbAdapter, SchemaSnapshot } from '../db/adapter.js';
import {
  createPolicyCache,
  type PolicyCache,
  type PolicyCacheLogger,
  type PolicyChangeSource,
} from '../policy-cache.js';
import { createPgChangeListener } from './pg-change-listener.js';
import { listPolicies } from './policy-service.js';
import { indexedColumns, relationProblems } from './relation-health.js';

/** The NOTIFY channel of sql/002_policies_notify.sql. */
export const POLICY_CHANNEL = 'rest_policies';

export interface DatabasePolicyCacheDeps {
  readonly adapter: DbAdapter;
  /** The adapter's URL: PostgreSQL gets a dedicated LISTEN connection. */
  readonly url: string;
  readonly schema: { refresh(): Promise<SchemaSnapshot> };
  readonly logger?: PolicyCacheLogger;
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

export function policyChangeSource(deps: DatabasePolicyCacheDeps): PolicyChangeSource {
  switch (deps.adapter.kind) {
    case 'postgres':
      return {
        kind: 'push',
        subscribe: (onChange) =>
          createPgChangeListener({
            url: deps.url,
            channel: POLICY_CHANNEL,
            onChange,
            ...(deps.logger === undefined ? {} : { logger: deps.logger }),
          }),
      };
    case 'mysql':
    case 'sqlite':
      return {
        kind: 'poll',
        ...(deps.pollIntervalMs === undefined ? {} : { intervalMs: deps.pollIntervalMs }),
      };
  }
}

/**
 * Warns once per process about each relation problem of the stored policies (relation-health.ts):
 * rows on a cycle (written by hand; they deny) and subqueries on unindexed columns. Checked on the
 * first load, which starts at once, and on every change; only sets with subqueries cost a look at
 * the schema and its indexes.
 */
function warnAboutRelations(
  cache: PolicyCache<PolicySet>,
  deps: DatabasePolicyCacheDeps,
  logger: PolicyCacheLogger,
): { close(): void } {
  const warned = new Set<string>();
  let closed = false;
  const check = async (compiled: PolicySet): Promise<void> => {
    if (compiled.subqueryTables.size === 0) return;
    const schema = await deps.schema.refresh();
    const problems = relationProblems(compiled, schema, await indexedColumns(deps.adapter, schema));
    for (const problem of problems) {
      if (closed || warned.has(problem.message)) continue;
      warned.add(problem.message);
      const { message, ...fields } = problem;
      logger.warn(fields, message);
    }
  };
  const failed = (e: unknown): void => {
    if (!closed)
      logger.warn({ err: e instanceof Error ? e.message : String(e) }, 'checking policy relations failed');
  };
  const unsubscribe = cache.subscribe(({ compiled }) => void check(compiled).catch(failed));
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
  const relations = warnAboutRelations(cache, deps, deps.logger);
  return {
    ...cache,
    close: async () => {
      relations.close();
      await cache.close();
    },
  };
}
