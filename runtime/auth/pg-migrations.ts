// Applies the versioned PostgreSQL migrations of `sql/` with postgres-migrations, on a dedicated
// connection (its locks are per session, so a pooled connection would not do).

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { migrate } from 'postgres-migrations';
import { RestError } from '../../errors/rest-error.js';
import { mapDriverError } from '../db/map-db-error.js';
import { pgErrors } from '../db/postgres/pg-errors.js';

/**
 * The `sql/` directory: two levels up from the sources (`runtime/auth/`), three from the build
 * (`dist/runtime/auth/`).
 */
export function migrationsDirectory(): string {
  for (const relative of ['../../sql/', '../../../sql/']) {
    const dir = fileURLToPath(new URL(relative, import.meta.url));
    if (existsSync(`${dir}001_auth_tables.sql`)) return dir;
  }
  throw new Error('the sql/ migrations directory was not found next to the sources or the build');
}

// postgres-migrations polls its own lock once a second; concurrent runs queue on this blocking
// lock first, so ten simultaneous setups finish in milliseconds, not seconds
// (https://www.postgresql.org/docs/current/explicit-locking.html#ADVISORY-LOCKS).
const QUEUE_LOCK_KEY = 0x72657374; // "rest"

/**
 * Applies every migration of `sql/` not applied yet (recorded in postgres-migrations' own
 * `migrations` table) and returns the names of those it applied. Safe to run concurrently.
 */
export async function runPostgresMigrations(url: string): Promise<readonly string[]> {
  const client = new pg.Client({ connectionString: url, application_name: 'rest migrations' });
  // An error event without a listener would crash the process; the failing query reports it.
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT pg_advisory_lock($1)', [QUEUE_LOCK_KEY]);
    const applied = await migrate({ client }, migrationsDirectory());
    return applied.map((m) => m.name);
  } catch (e) {
    // postgres-migrations wraps the driver's error; its cause carries the SQLSTATE.
    const mapped = mapDriverError(pgErrors, e instanceof Error && e.cause !== undefined ? e.cause : e);
    throw mapped.category === 'internal'
      ? new RestError('migration_failed', 'the database migrations could not be applied', { cause: e })
      : mapped;
  } finally {
    // Ending the session releases its advisory locks too.
    await client.end().catch(() => undefined);
  }
}
