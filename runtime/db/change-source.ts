// How a cache hears about changes made outside this process: the policies (policies/policy-cache.ts)
// and the users' states (auth/user-states.ts).

import type { DbAdapter } from './adapter.js';
import { createPgChangeListener, type ChangeListenerLogger } from './postgres/pg-listener.js';

export type ChangeSource =
  /**
   * A push source (LISTEN/NOTIFY): `subscribe` registers the callback, returns a closer; the
   * callback gets the notification's payload, undefined after a (re)connect (anything changed).
   */
  | { readonly kind: 'push'; subscribe(onChange: (payload?: string) => void): { close(): Promise<void> } }
  /** Re-read the rows periodically and compare them. */
  | { readonly kind: 'poll'; readonly intervalMs?: number };

export interface DatabaseChangeSourceDeps {
  readonly adapter: DbAdapter;
  /** The adapter's URL: PostgreSQL gets a dedicated LISTEN connection. */
  readonly url: string;
  readonly logger?: ChangeListenerLogger;
  /** Poll interval on MySQL/MariaDB and SQLite (the cache's default when absent). */
  readonly pollIntervalMs?: number;
}

/**
 * How a cache of rows of this database hears of changes: PostgreSQL LISTENs on `channel` (which a
 * trigger NOTIFYs), MySQL/MariaDB and SQLite poll.
 */
export function databaseChangeSource(deps: DatabaseChangeSourceDeps, channel: string): ChangeSource {
  switch (deps.adapter.kind) {
    case 'postgres':
      return {
        kind: 'push',
        subscribe: (onChange) =>
          createPgChangeListener({
            url: deps.url,
            channel,
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
