// How a request's statements reach the database: the seam where the native RLS path will set
// its role and session settings; the default runs on the adapter's pool.

import type { Action, AuthUser } from '../../compiler/types.js';
import type { DbAdapter, DbSession, RunMode } from '../db/adapter.js';

export interface RunContext {
  readonly user: AuthUser;
  readonly action: Action;
  readonly table: string;
  /**
   * Aborted when the request's client has gone away (runtime/http/client-gone.ts): the adapter
   * drops the request before it takes a connection or cancels its statement (RunOptions).
   */
  readonly signal?: AbortSignal | undefined;
}

export type { RunMode };

export interface RequestRunner {
  run<T>(context: RunContext, mode: RunMode, fn: (session: DbSession) => Promise<T>): Promise<T>;
  /**
   * Inside a transaction of `run`: the statements that follow are judged as `context.action` (an
   * upsert's update inside its create). Absent where the action is not carried into the database.
   */
  switchAction?(session: DbSession, context: RunContext): Promise<void>;
}

export function adapterRunner(adapter: DbAdapter): RequestRunner {
  return {
    run: ({ signal }, mode, fn) => {
      if (mode === 'transaction') return adapter.transaction(fn, { signal });
      return fn(signal === undefined ? adapter : { query: (sql) => adapter.query(sql, { signal }) });
    },
  };
}
