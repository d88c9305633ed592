// A DbAdapter whose every statement runs inside one outer transaction of another adapter that is
// always rolled back: a policy test file's fixtures, requests and (on PostgreSQL native) generated
// row-level security never stay — a process killed mid-file leaves an open transaction that the
// database rolls back when the connection drops. Each request's own transaction (and each single
// statement) becomes a SAVEPOINT, so a failing request undoes only itself, as it would on its own.
//
// The schema is read once, before the transaction opens (SQLite's schema check waits for the
// transaction it would run inside); a file does not change tables.

import type { RenderedSql } from '../../compiler/sql/fragment.js';
import type { DbAdapter, DbSession, QueryResult, SchemaSnapshot } from '../db/adapter.js';
import type { PgAdapter, Pipeline } from '../db/postgres/pg-adapter.js';

/** Thrown out of the outer transaction so that it rolls back; carries what the work returned. */
class RolledBack<T> extends Error {
  constructor(readonly value: T) {
    super('rolled back');
  }
}

/** One operation at a time on the pinned connection: savepoints never interleave. */
function serial(): <T>(work: () => Promise<T>) => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(work: () => Promise<T>): Promise<T> => {
    const next = tail.then(work, work);
    tail = next.catch(() => undefined);
    return next;
  };
}

/**
 * Runs `fn` with an adapter pinned to one transaction of `base`, then rolls that transaction back
 * whatever `fn` did; resolves with what `fn` resolved with.
 */
export async function withRolledBackAdapter<T>(
  base: DbAdapter,
  fn: (pinned: DbAdapter) => Promise<T>,
): Promise<T> {
  const snapshot = await base.introspect();
  const version = await base.schemaVersion();
  try {
    await base.transaction(async (tx) => {
      throw new RolledBack(await fn(pinnedAdapter(base, tx, snapshot, version)));
    });
  } catch (e) {
    if (e instanceof RolledBack) return e.value as T;
    throw e;
  }
  throw new Error('the rolled-back transaction committed');
}

function pinnedAdapter(base: DbAdapter, tx: DbSession, snapshot: SchemaSnapshot, version: string): DbAdapter {
  const exclusive = serial();
  let savepoints = 0;
  const run = (text: string): Promise<QueryResult> => tx.query({ text, values: [] });
  // On PostgreSQL a request's settings (role, rest.*) are transaction-local: released with its
  // savepoint they would outlive it, so the login role is taken back after each one.
  const resetRole = base.kind === 'postgres' ? () => run('SET LOCAL ROLE NONE') : async () => undefined;

  /** `fn` inside a savepoint: released when it resolves, rolled back to when it throws. */
  const inSavepoint = <R>(fn: (session: DbSession) => Promise<R>): Promise<R> =>
    exclusive(async () => {
      savepoints += 1;
      const name = `rest_case_${savepoints}`;
      await run(`SAVEPOINT ${name}`);
      try {
        const result = await fn(tx);
        await run(`RELEASE SAVEPOINT ${name}`);
        return result;
      } catch (e) {
        await run(`ROLLBACK TO SAVEPOINT ${name}`);
        throw e;
      } finally {
        await resetRole();
      }
    });

  const adapter: DbAdapter = {
    kind: base.kind,
    dialect: base.dialect,
    returning: base.returning,
    query: (sql: RenderedSql) => inSavepoint((session) => session.query(sql)),
    transaction: (fn) => inSavepoint(fn),
    exec: async (sqlText) => {
      await inSavepoint((session) => session.query({ text: sqlText, values: [] }));
    },
    introspect: () => Promise.resolve(snapshot),
    schemaVersion: () => Promise.resolve(version),
    close: () => Promise.resolve(),
  };
  if (base.kind !== 'postgres') return adapter;
  const pipelined = <R>(pipeline: Pipeline, fn: (session: DbSession) => Promise<R>): Promise<R> =>
    inSavepoint(async (session) => {
      for (const sql of pipeline.opening) {
        try {
          await session.query(sql);
        } catch (e) {
          throw pipeline.openingError === undefined ? e : pipeline.openingError(driverError(e));
        }
      }
      return fn({
        query: async (sql) => {
          try {
            return await session.query(sql);
          } catch (e) {
            throw pipeline.statementError?.(driverError(e)) ?? e;
          }
        },
      });
    });
  const pg: PgAdapter = { ...adapter, kind: 'postgres', pipelined };
  return pg;
}

/** The driver's error under a mapped one (the SQLSTATE the native runner reads), else the error. */
function driverError(e: unknown): unknown {
  const cause = e instanceof Error ? (e.cause as { code?: unknown } | undefined) : undefined;
  return typeof cause?.code === 'string' && /^[0-9A-Z]{5}$/.test(cause.code) ? cause : e;
}
