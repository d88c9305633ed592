// Write guards stacked: the enforcement path's (owner preset) and the auth tables' rules
// (runtime/policies/auth-table-guards.ts) on the same write.

import type { DbSession, Row } from '../db/adapter.js';
import type { WriteGuard, WriteRow } from './authorizer.js';

/** Runs `first`, then `second`, for each hook either of them has. */
export function composeGuards(first: WriteGuard | undefined, second: WriteGuard): WriteGuard {
  if (first === undefined) return second;
  const guard: { -readonly [K in keyof WriteGuard]: WriteGuard[K] } = {};
  if (first.prepareCreate !== undefined || second.prepareCreate !== undefined) {
    guard.prepareCreate = async (rows: readonly WriteRow[], tx: DbSession) => {
      const once = first.prepareCreate === undefined ? rows : await first.prepareCreate(rows, tx);
      return second.prepareCreate === undefined ? once : second.prepareCreate(once, tx);
    };
  }
  if (first.preparePatch !== undefined || second.preparePatch !== undefined) {
    guard.preparePatch = async (patch: WriteRow, tx: DbSession) => {
      const once = first.preparePatch === undefined ? patch : await first.preparePatch(patch, tx);
      return second.preparePatch === undefined ? once : second.preparePatch(once, tx);
    };
  }
  if (first.checkStoredRows !== undefined || second.checkStoredRows !== undefined) {
    guard.checkStoredRows = async (rows: readonly Row[], tx: DbSession) => {
      await first.checkStoredRows?.(rows, tx);
      await second.checkStoredRows?.(rows, tx);
    };
  }
  return guard;
}
