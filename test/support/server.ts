// Test servers: the real startServer (or createApp with chosen seams) on 127.0.0.1:0, a captured
// log, and a raw driver connection to set up and inspect the database independently of rest.

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Database from 'better-sqlite3';
import mysql from 'mysql2/promise';
import pg from 'pg';
import type { DialectName } from '../../compiler/types.js';
import { createApp, systemClock, type AppDeps } from '../../runtime/server/app.js';
import { bcryptHasher, type PasswordHasher } from '../../runtime/auth/passwords.js';
import { DEFAULT_MAX_ROWS, type Config, type CorsConfig } from '../../runtime/config.js';
import { createLogger, type Logger } from '../../runtime/logger.js';
import { startServer, type ServerHandle, type StartOptions } from '../../runtime/server/server.js';
import type { TestDatabase } from './databases.js';

/** Every log line the server wrote, parsed. */
export interface CapturedLog {
  readonly logger: Logger;
  readonly lines: Array<Readonly<Record<string, unknown>>>;
}

export function captureLog(level: 'debug' | 'info' = 'debug'): CapturedLog {
  const lines: Array<Readonly<Record<string, unknown>>> = [];
  const logger = createLogger({
    level,
    destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  });
  return { logger, lines };
}

export function testConfig(dbUrl: string, cors: CorsConfig = { enabled: false, origins: [] }): Config {
  return {
    addr: { host: '127.0.0.1', port: 0 },
    db: { url: dbUrl, rls: false },
    auth: { enabled: false, secret: null, tokenTtlSeconds: 3600 },
    cors,
    http: { trustProxy: false, maxRows: DEFAULT_MAX_ROWS },
  };
}

export interface TestServer {
  readonly url: string;
  readonly handle: ServerHandle;
  readonly log: CapturedLog;
}

/**
 * rest's password hashing at bcrypt cost 4 instead of 10: the same code and the same bcrypt, some
 * 60 times less CPU per hash (a test server hashes for setup, every registration and login). What
 * the cost itself must be is proven on servers started with `hasher: 'production'`
 * (auth-endpoints.test.ts) and by the contract tests of setup and users (test/contract/).
 */
export const TEST_HASHER: PasswordHasher = bcryptHasher(4);

export interface TestServerOptions extends Pick<StartOptions, 'sessionClock' | 'schemaCheckIntervalMs'> {
  /** Default TEST_HASHER; 'production': the server's own (createPasswordHasher, cost 10). */
  readonly hasher?: PasswordHasher | 'production';
}

/** `options.sessionClock`: the server's sessions live in that time (runtime/server/wire-auth.ts). */
export async function startTestServer(config: Config, options: TestServerOptions = {}): Promise<TestServer> {
  const log = captureLog();
  const { hasher = TEST_HASHER, ...rest } = options;
  // In-process servers close fast: a test's idle keep-alive client must not hold teardown for the
  // production grace (the draining itself is proven by test/e2e/process/shutdown-drain.test.ts).
  const handle = await startServer(config, {
    logger: log.logger,
    shutdownGraceMs: 200,
    ...rest,
    ...(hasher === 'production' ? {} : { hasher }),
  });
  return { url: handle.url, handle, log };
}

/** createApp with injected seams (authorizer, authenticate, runner) served on 127.0.0.1:0. */
export async function startAppServer(
  deps: Omit<AppDeps, 'logger' | 'clock'> & Partial<Pick<AppDeps, 'logger' | 'clock'>>,
): Promise<{ readonly url: string; close(): Promise<void> }> {
  const server = createServer(createApp({ logger: captureLog().logger, clock: systemClock, ...deps }));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Plain driver access (not through rest): DDL, fixtures and checks of what was written. */
export interface RawSql {
  exec(sql: string): Promise<void>;
  rows(sql: string): Promise<Array<Record<string, unknown>>>;
  /** `SELECT COUNT(*)` of a table as a number. */
  count(table: string): Promise<number>;
  close(): Promise<void>;
}

const quote: Readonly<Record<DialectName, (name: string) => string>> = {
  postgres: (n) => `"${n.replaceAll('"', '""')}"`,
  mysql: (n) => `\`${n.replaceAll('`', '``')}\``,
  sqlite: (n) => `"${n.replaceAll('"', '""')}"`,
};

export function quoteIdent(kind: DialectName, name: string): string {
  return quote[kind](name);
}

export async function openRawSql(db: TestDatabase): Promise<RawSql> {
  let rows: RawSql['rows'];
  let exec: RawSql['exec'];
  let close: RawSql['close'];
  switch (db.kind) {
    case 'postgres': {
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      rows = async (sql) => (await c.query(sql)).rows as Array<Record<string, unknown>>;
      exec = async (sql) => void (await c.query(sql));
      close = () => c.end();
      break;
    }
    case 'mysql': {
      const u = new URL(db.url);
      const c = await mysql.createConnection({
        host: u.hostname,
        port: Number(u.port || 3306),
        user: decodeURIComponent(u.username || 'root'),
        password: decodeURIComponent(u.password),
        database: u.pathname.slice(1),
        multipleStatements: true,
      });
      rows = async (sql) => (await c.query(sql))[0] as Array<Record<string, unknown>>;
      exec = async (sql) => void (await c.query(sql));
      close = () => c.end();
      break;
    }
    case 'sqlite': {
      const c = new Database(db.url.slice('sqlite://'.length));
      c.pragma('journal_mode = WAL');
      c.pragma('busy_timeout = 5000');
      rows = async (sql) => c.prepare(sql).all() as Array<Record<string, unknown>>;
      exec = async (sql) => void c.exec(sql);
      close = async () => void c.close();
      break;
    }
  }
  return {
    rows,
    exec,
    close,
    count: async (table) =>
      Number((await rows(`SELECT COUNT(*) AS n FROM ${quote[db.kind](table)}`))[0]?.['n']),
  };
}
