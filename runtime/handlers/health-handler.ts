// `GET /`: 200 with the database kind and whether auth is on, 503 while the database is unreachable.
// With auth off it says so in words as well: every table is then open to anyone.

import { SqlBuilder, renderSql } from '../../compiler/sql/fragment.js';
import type { DialectName } from '../../compiler/types.js';
import { RestError } from '../../errors/rest-error.js';
import type { DbAdapter } from '../db/adapter.js';

export interface HandlerResult {
  readonly status: number;
  readonly body: unknown;
}

export interface HealthBody {
  readonly status: 'ok';
  readonly database: DialectName;
  readonly auth: boolean;
  /** Only when auth is off. */
  readonly warning?: typeof AUTH_OFF_WARNING;
}

/** What a server without auth tells its health check and its start-up log. */
export const AUTH_OFF_WARNING =
  'auth is off: every table is public, readable and writable by anyone; set -auth.secret (REST_AUTH_SECRET) to protect it';

/** A database that does not answer within this is as good as down for a health check. */
export const HEALTH_TIMEOUT_MS = 2000;

export async function checkHealth(
  adapter: DbAdapter,
  authEnabled: boolean,
  timeoutMs = HEALTH_TIMEOUT_MS,
): Promise<HandlerResult> {
  const probe = renderSql(adapter.dialect, new SqlBuilder(adapter.dialect).append('SELECT 1').build());
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
    timer.unref();
  });
  try {
    await Promise.race([adapter.query(probe), timeout]);
  } catch (e) {
    throw new RestError('database_unavailable', 'the database is unavailable', { cause: e });
  } finally {
    clearTimeout(timer);
  }
  const body: HealthBody = authEnabled
    ? { status: 'ok', database: adapter.kind, auth: true }
    : { status: 'ok', database: adapter.kind, auth: false, warning: AUTH_OFF_WARNING };
  return { status: 200, body };
}
