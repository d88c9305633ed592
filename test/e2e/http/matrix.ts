// Shared harness of the HTTP matrix: one database per kind and suite, the fixture tables, seed
// rows, a real server on port 0, a raw connection, and exact error-body assertions.

import { afterAll, beforeAll, describe, expect } from 'vitest';
import type { DialectName } from '../../../compiler/types.js';
import type { CorsConfig } from '../../../runtime/config.js';
import {
  ALL_KINDS,
  createTestDatabase,
  isAvailable,
  skipReason,
  type TestDatabase,
} from '../../support/databases.js';
import { client, type Client, type Reply } from '../../support/http.js';
import {
  openRawSql,
  startTestServer,
  testConfig,
  type RawSql,
  type TestServer,
} from '../../support/server.js';
import { FIXTURE_DDL } from './fixtures.js';

export interface MatrixContext {
  readonly kind: DialectName;
  readonly db: TestDatabase;
  readonly sql: RawSql;
  readonly server: TestServer;
  readonly http: Client;
}

/** Runs `body` once per database; a database without its env URL is skipped with the reason. */
export function forEachDatabase(
  title: string,
  body: (ctx: () => MatrixContext) => void,
  cors?: CorsConfig,
): void {
  for (const kind of ALL_KINDS) {
    const reason = skipReason(kind);
    describe.skipIf(!isAvailable(kind))(
      `${title} [${kind}]${reason === undefined ? '' : ` — ${reason}`}`,
      () => {
        let ctx: MatrixContext | undefined;
        beforeAll(async () => {
          const db = await createTestDatabase(kind);
          const sql = await openRawSql(db);
          for (const ddl of FIXTURE_DDL[kind]) await sql.exec(ddl);
          const server = await startTestServer(testConfig(db.url, cors));
          ctx = { kind, db, sql, server, http: client(server.url) };
        });
        afterAll(async () => {
          await ctx?.server.handle.close();
          await ctx?.sql.close();
          await ctx?.db.drop();
        });
        body(() => {
          if (ctx === undefined) throw new Error('the suite did not start');
          return ctx;
        });
      },
    );
  }
}

const SEED_VALUES = `(1, 'apple', 5, 1.50, TRUE, '{"color":"red"}', '2024-01-15', 'Fresh'),
  (2, 'Banana', 12, 0.25, FALSE, NULL, NULL, NULL),
  (3, 'cherry pie', NULL, 12.00, FALSE, NULL, '2024-03-01', 'has 50% off_sale'),
  (4, 'date', 0, NULL, TRUE, '[1,2]', NULL, 'dried'),
  (5, 'Élan', -3, 99.99, FALSE, NULL, '2023-12-31', 'ÉCLAIR')`;

/** Resets `items` to the five seed rows (ids 1–5; new rows get ids above 100). */
export async function seedItems(ctx: Pick<MatrixContext, 'kind' | 'sql'>): Promise<void> {
  await ctx.sql.exec('DELETE FROM items');
  await ctx.sql.exec(
    `INSERT INTO items (id, title, qty, price, done, meta, due, note) VALUES ${SEED_VALUES}`,
  );
  const bump: Record<DialectName, string> = {
    postgres: "SELECT setval('items_id_seq', 100)",
    mysql: 'ALTER TABLE items AUTO_INCREMENT = 101',
    sqlite: "UPDATE sqlite_sequence SET seq = 100 WHERE name = 'items'",
  };
  await ctx.sql.exec(bump[ctx.kind]);
}

/** The exact docs/http-api.md error body: `{"error": {"code", "message"[, "details"]}}` and nothing else. */
export function expectError(
  reply: Reply,
  status: number,
  code: string,
  details?: Record<string, unknown>,
): void {
  expect({
    status: reply.status,
    code: (reply.json as { error?: { code?: unknown } } | undefined)?.error?.code,
  }).toEqual({
    status,
    code,
  });
  const error = (reply.json as { error: Record<string, unknown> }).error;
  expect(Object.keys(reply.json as object)).toEqual(['error']);
  expect(typeof error['message']).toBe('string');
  expect(Object.keys(error).every((k) => ['code', 'message', 'details'].includes(k))).toBe(true);
  if (details !== undefined) expect(error['details']).toEqual(details);
  expect(reply.headers.get('content-type')).toBe('application/json; charset=utf-8');
  expect(reply.headers.get('x-content-type-options')).toBe('nosniff');
}

export const ids = (reply: Reply): unknown[] => (reply.json as Array<{ id: unknown }>).map((r) => r.id);
