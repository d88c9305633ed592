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

export function createDatabasePolicyCache(deps: DatabasePolicyCacheDeps): PolicyCache<PolicySet> {
  const { dialect } = deps.adapter;
  return createPolicyCache({
    load: policyLoader(deps.adapter, deps.schema),
    compile: (rows) => compilePolicySet(rows, dialect),
    changes: policyChangeSource(deps),
    ...(deps.logger === undefined ? {} : { logger: deps.logger }),
  });
}
