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
  /**
   * A URL for PostgreSQL's dedicated LISTEN connection (a session of its own: not through a
   * transaction pooler); undefined: PostgreSQL is polled like the others.
   */
  readonly url: string | undefined;
  readonly logger?: ChangeListenerLogger;
  /** Poll interval on MySQL/MariaDB and SQLite (the cache's default when absent). */
  readonly pollIntervalMs?: number;
}

/**
 * How a cache of rows of this database hears of changes: PostgreSQL LISTENs on `channel` (which a
 * trigger NOTIFYs) when it has a URL for that, MySQL/MariaDB and SQLite poll.
 */
export function databaseChangeSource(deps: DatabaseChangeSourceDeps, channel: string): ChangeSource {
  const { url } = deps;
  switch (deps.adapter.kind) {
    case 'postgres':
      if (url === undefined) return pollSource(deps);
      return {
        kind: 'push',
        subscribe: (onChange) =>
          createPgChangeListener({
            url,
            channel,
            onChange,
            ...(deps.logger === undefined ? {} : { logger: deps.logger }),
          }),
      };
    case 'mysql':
    case 'sqlite':
      return pollSource(deps);
  }
}

const pollSource = (deps: DatabaseChangeSourceDeps): ChangeSource => ({
  kind: 'poll',
  ...(deps.pollIntervalMs === undefined ? {} : { intervalMs: deps.pollIntervalMs }),
});
