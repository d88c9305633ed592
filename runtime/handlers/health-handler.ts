// `GET /`: 200 with the database kind and whether auth is on, 503 while the database is unreachable.

import { SqlBuilder, renderSql } from '../../compiler/sql/fragment.js';
import type { DialectName } from '../../compiler/types.js';
import { RestError } from '../../errors/rest-error.js';
import type { DbAdapter } from '../db/adapter.js';
import type { HandlerResult } from './table-handler.js';

export interface HealthBody {
  readonly status: 'ok';
  readonly database: DialectName;
  readonly auth: boolean;
}

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
  const body: HealthBody = { status: 'ok', database: adapter.kind, auth: authEnabled };
  return { status: 200, body };
}
