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
}

export function adapterRunner(adapter: DbAdapter): RequestRunner {
  return {
    run: (_context, mode, fn) => (mode === 'single' ? fn(adapter) : adapter.transaction(fn)),
  };
}
