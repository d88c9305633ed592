// Test databases: every suite gets its own randomly named database and drops it afterwards.
// SQLite always runs; PostgreSQL and MariaDB run when REST_TEST_PG_URL / REST_TEST_MYSQL_URL
// are set (CI sets and requires them); otherwise their cases are skipped, loudly.

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
  /** URL in the syntax of SPEC §1, ready for `-db.url`. */
  readonly url: string;
  readonly name: string;
  drop(): Promise<void>;
}

const envUrl: Readonly<Record<Exclude<DialectName, 'sqlite'>, string | undefined>> = {
  postgres: process.env['REST_TEST_PG_URL'],
  mysql: process.env['REST_TEST_MYSQL_URL'],
};

export const ALL_KINDS: readonly DialectName[] = ['sqlite', 'postgres', 'mysql'];

export function isAvailable(kind: DialectName): boolean {
  return kind === 'sqlite' || Boolean(envUrl[kind]);
}

export function skipReason(kind: DialectName): string | undefined {
  if (isAvailable(kind)) return undefined;
  const variable = kind === 'postgres' ? 'REST_TEST_PG_URL' : 'REST_TEST_MYSQL_URL';
  return `${kind} skipped: ${variable} is not set`;
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
      };
    }
    case 'postgres': {
      const admin = requireUrl(kind);
      await withPg(admin, (c) => c.query(`CREATE DATABASE ${name}`));
      return {
        kind,
        name,
        url: withDatabase(admin, name),
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
