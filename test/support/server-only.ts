// Cases that need a real database server of their kind: they skip where it is missing — and, for
// PostgreSQL, on the embedded PGlite (several connections, roles, NOTIFY) — saying why in the title.

import { describe, it } from 'vitest';
import type { DialectName } from '../../compiler/types.js';
import { serverSkipReason } from './databases.js';

type Case = (title: string, fn: () => Promise<void> | void, timeout?: number) => void;
type Suite = (title: string, fn: () => void) => void;

const titled = (title: string, reason: string | undefined): string =>
  reason === undefined ? title : `${title} (skipped: ${reason})`;

/** `it` for a case that needs `kind`'s server. */
export function serverIt(kind: DialectName = 'postgres'): Case {
  const reason = serverSkipReason(kind);
  return (title, fn, timeout) => it.skipIf(reason !== undefined)(titled(title, reason), fn, timeout);
}

/** `describe` for a suite that needs `kind`'s server. */
export function serverDescribe(kind: DialectName = 'postgres'): Suite {
  const reason = serverSkipReason(kind);
  return (title, fn) => describe.skipIf(reason !== undefined)(titled(title, reason), fn);
}
