// Test databases: every suite gets its own randomly named database and drops it afterwards.
// SQLite always runs. PostgreSQL runs on the server of REST_TEST_PG_URL (CI sets and requires
// it); without it, on an embedded PostgreSQL (PGlite, one instance per test database, served
// over TCP by pglite-socket), where the few cases that need a real server skip with their reason.
// MariaDB runs when REST_TEST_MYSQL_URL is set; otherwise its cases are skipped, loudly.

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import pg from 'pg';
import type { DialectName } from '../../compiler/types.js';
import { requestRoleName } from '../../runtime/rls/request-role.js';

export interface TestDatabase {
  readonly kind: DialectName;
  /** URL in the syntax of docs/operations.md, ready for `-db.url`. */
  readonly url: string;
  readonly name: string;
  drop(): Promise<void>;
  /** After drop(): drops cluster-wide roles the tests made (an embedded PostgreSQL took them along). */
  dropRoles(roles: readonly string[]): Promise<void>;
}

const envUrl: Readonly<Record<Exclude<DialectName, 'sqlite'>, string | undefined>> = {
  postgres: process.env['REST_TEST_PG_URL'],
  mysql: process.env['REST_TEST_MYSQL_URL'],
};

export const ALL_KINDS: readonly DialectName[] = ['sqlite', 'postgres', 'mysql'];

/** No PostgreSQL server was given: PostgreSQL cases run on an embedded PGlite. */
export const EMBEDDED_PG = !envUrl.postgres;

export function isAvailable(kind: DialectName): boolean {
  return kind !== 'mysql' || Boolean(envUrl.mysql);
}

export function skipReason(kind: DialectName): string | undefined {
  if (isAvailable(kind)) return undefined;
  return `${kind} skipped: REST_TEST_MYSQL_URL is not set`;
}

/**
 * PgBouncer in transaction mode in front of REST_TEST_PG_URL's server (`.ci/run` starts one),
 * reaching every database of that server by name. CI sets and requires it.
 */
const PGBOUNCER_URL = process.env['REST_TEST_PGBOUNCER_URL'];

/** Why a case that needs PgBouncer is skipped, or undefined when it runs; CI fails instead. */
export function pgBouncerSkipReason(): string | undefined {
  if (PGBOUNCER_URL) return serverSkipReason('postgres');
  if (process.env['CI'] === 'true')
    throw new Error('CI needs REST_TEST_PGBOUNCER_URL (.ci/run starts PgBouncer)');
  return 'REST_TEST_PGBOUNCER_URL is not set (no PgBouncer in transaction mode to test through)';
}

/** The URL of the database of `url` (a PostgreSQL test database's) through PgBouncer. */
export function throughPgBouncer(url: string): string {
  if (!PGBOUNCER_URL) throw new Error('REST_TEST_PGBOUNCER_URL is not set');
  return withDatabase(PGBOUNCER_URL, new URL(url).pathname.slice(1));
}

/** Column collations for text: linguistic (ICU) on a server; PGlite is built without ICU. */
export const pgTextCollations = (): { readonly org: string; readonly name: string } =>
  EMBEDDED_PG ? { org: '', name: '' } : { org: ' COLLATE "und-x-icu"', name: ' COLLATE "en-x-icu"' };

/** Why a case that needs a real PostgreSQL server is skipped on the embedded one. */
export const PG_SERVER_ONLY =
  'needs a PostgreSQL server (REST_TEST_PG_URL): PGlite has one backend that interleaves its connections, one login role and no cross-connection NOTIFY';

/** Why a case that needs `kind`'s database server skips here, or undefined when it runs. */
export function serverSkipReason(kind: DialectName): string | undefined {
  return skipReason(kind) ?? (kind === 'postgres' && EMBEDDED_PG ? PG_SERVER_ONLY : undefined);
}

/** A PGlite instance served over TCP on a free port: a database of its own. */
async function startEmbeddedPg(): Promise<TestDatabase> {
  const [{ PGlite }, { PGLiteSocketServer }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('@electric-sql/pglite-socket'),
  ]);
  const db = await PGlite.create();
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 100 });
  await server.start();
  // PGlite holds the one database "postgres"; the name is what current_database() says.
  const name = 'postgres';
  const url = `postgres://postgres@${server.getServerConn()}/${name}`;
  return {
    kind: 'postgres',
    name,
    url,
    drop: async () => {
      await server.stop();
      await db.close();
    },
    dropRoles: async () => undefined,
  };
}

/** How long closeAndDrop waits for an adapter to close. */
const CLOSE_BOUND_MS = 10_000;

/**
 * Closes `adapters` in order, then drops `db`. A pool ends only once its connections are idle, and
 * one that waits for an answer that never comes (PGlite's one backend loses the messages of
 * parallel connections) never is: each close is given CLOSE_BOUND_MS, the drop (which ends such
 * connections) happens in any case, and a close that did not finish is reported after it.
 */
export async function closeAndDrop(
  db: TestDatabase | undefined,
  adapters: ReadonlyArray<{ close(): Promise<void> } | undefined>,
): Promise<void> {
  const hung: number[] = [];
  for (const [i, adapter] of adapters.entries()) {
    if (adapter === undefined) continue;
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<'hung'>((resolve) => {
      timer = setTimeout(() => resolve('hung'), CLOSE_BOUND_MS);
    });
    try {
      if ((await Promise.race([adapter.close(), bound])) === 'hung') hung.push(i);
    } finally {
      clearTimeout(timer);
    }
  }
  await db?.drop();
  if (hung.length > 0) {
    throw new Error(
      `adapter(s) ${hung.join(', ')} did not close within ${CLOSE_BOUND_MS} ms (a connection waited for an answer); the database was dropped`,
    );
  }
}

const randomName = (): string => `rest_test_${randomBytes(6).toString('hex')}`;

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

export async function createTestDatabase(kind: DialectName): Promise<TestDatabase> {
  const name = randomName();
  switch (kind) {
    case 'sqlite': {
      const dir = mkdtempSync(join(tmpdir(), 'rest-test-'));
      const file = join(dir, `${name}.db`);
      return {
        kind,
        name,
        url: `sqlite://${file}`,
        drop: async () => rmSync(dir, { recursive: true, force: true }),
        dropRoles: async () => undefined,
      };
    }
    case 'postgres': {
      if (EMBEDDED_PG) return startEmbeddedPg();
      const admin = requireUrl(kind);
      await withPg(admin, (c) => c.query(`CREATE DATABASE ${name}`));
      return {
        kind,
        name,
        url: withDatabase(admin, name),
        dropRoles: (roles) =>
          withPg(admin, async (c) => {
            for (const role of roles) await c.query(`DROP ROLE IF EXISTS ${role}`);
          }),
        // A server with -db.rls on creates its request role (cluster-wide) for this database.
        drop: () =>
          withPg(admin, async (c) => {
            await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
            await c.query(`DROP ROLE IF EXISTS ${requestRoleName(name)}`);
          }),
      };
    }
    case 'mysql': {
      const admin = requireUrl(kind);
      await withMysql(admin, (c) => c.query(`CREATE DATABASE ${name} CHARACTER SET utf8mb4`));
      return {
        kind,
        name,
        url: withDatabase(admin, name),
        dropRoles: async () => undefined,
        drop: () => withMysql(admin, (c) => c.query(`DROP DATABASE IF EXISTS ${name}`)).then(() => {}),
      };
    }
  }
}

function requireUrl(kind: Exclude<DialectName, 'sqlite'>): string {
  const url = envUrl[kind];
  if (!url) throw new Error(`no test URL for ${kind}`);
  return url;
}

export async function withPg<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export async function withMysql<T>(url: string, fn: (c: mysql.Connection) => Promise<T>): Promise<T> {
  const u = new URL(url);
  const connection = await mysql.createConnection({
    host: u.hostname,
    port: Number(u.port || 3306),
    user: decodeURIComponent(u.username || 'root'),
    password: decodeURIComponent(u.password),
    ...(u.pathname.length > 1 ? { database: u.pathname.slice(1) } : {}),
  });
  try {
    return await fn(connection);
  } finally {
    await connection.end();
  }
}
