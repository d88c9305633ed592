// Helpers of the db-* contract suites: one adapter per database, statements written with `?`.

import type { DialectName } from '../../compiler/types.js';
import type { DbAdapter, DbSession, QueryResult } from '../../runtime/db/adapter.js';
import { createAdapter } from '../../runtime/db/create-adapter.js';
import { createTestDatabase, type TestDatabase } from '../support/databases.js';

export interface AdapterFixture {
  readonly db: TestDatabase;
  readonly adapter: DbAdapter;
}

export async function openFixture(kind: DialectName, poolSize = 2): Promise<AdapterFixture> {
  const db = await createTestDatabase(kind);
  try {
    return { db, adapter: await createAdapter(db.url, { poolSize }) };
  } catch (e) {
    await db.drop();
    throw e;
  }
}

export async function closeFixture(f: AdapterFixture | undefined): Promise<void> {
  if (f === undefined) return;
  await f.adapter.close();
  await f.db.drop();
}

/** Runs `text` with each `?` replaced by the dialect's placeholder (test SQL has no other `?`). */
export function q(
  session: DbSession,
  dialect: DbAdapter['dialect'],
  text: string,
  values: readonly unknown[] = [],
): Promise<QueryResult> {
  const parts = text.split('?');
  const rendered = parts.map((part, i) => (i === 0 ? part : dialect.placeholder(i) + part)).join('');
  return session.query({ text: rendered, values: values.map((v) => dialect.bindValue(v)) });
}

/** Resolves to the rejection reason; fails when the promise resolves. */
export async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}
