// How a request's statements reach the database: the seam where the native RLS path will set
// its role and session settings; the default runs on the adapter's pool.

import type { Action, AuthUser } from '../../compiler/types.js';
import type { DbAdapter, DbSession, RunMode } from '../db/adapter.js';

export interface RunContext {
  readonly user: AuthUser;
  readonly action: Action;
  readonly table: string;
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
    run: (_context, mode, fn) => (mode === 'single' ? fn(adapter) : adapter.transaction(fn)),
  };
}
