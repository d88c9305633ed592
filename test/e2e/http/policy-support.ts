// Harness of the auth, policy and attack suites: one database per kind and suite with the
// tables below, a real server with auth enabled, setup done through POST /auth/setup, logged-in
// users, tokens minted with the server's secret, and helpers to set policies and check rows.

import { randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import type { DialectName } from '../../../compiler/types.js';
import {
  ALL_KINDS,
  createTestDatabase,
  isAvailable,
  skipReason,
  type TestDatabase,
} from '../../support/databases.js';
import { client, type Client, type Reply } from '../../support/http.js';
import { newSecret } from '../../support/secret.js';
import type { Config } from '../../../runtime/config.js';
import {
  openRawSql,
  startTestServer,
  testConfig,
  type RawSql,
  type TestServer,
} from '../../support/server.js';

/** The served tables: owner column `user_id`, custom owner `author_id`, no owner column, org claims. */
export const POLICY_DDL: Readonly<Record<DialectName, readonly string[]>> = {
  postgres: [
    'CREATE TABLE notes (id serial PRIMARY KEY, user_id integer, body varchar(100))',
    'CREATE TABLE posts (id serial PRIMARY KEY, author_id integer, title varchar(100), published boolean NOT NULL DEFAULT false)',
    'CREATE TABLE plain (id serial PRIMARY KEY, body varchar(100))',
    'CREATE TABLE docs (id serial PRIMARY KEY, org_id integer, title varchar(100), level integer)',
  ],
  mysql: [
    'CREATE TABLE notes (id int AUTO_INCREMENT PRIMARY KEY, user_id int, body varchar(100))',
    'CREATE TABLE posts (id int AUTO_INCREMENT PRIMARY KEY, author_id int, title varchar(100), published boolean NOT NULL DEFAULT false)',
    'CREATE TABLE plain (id int AUTO_INCREMENT PRIMARY KEY, body varchar(100))',
    'CREATE TABLE docs (id int AUTO_INCREMENT PRIMARY KEY, org_id int, title varchar(100), level int)',
  ],
  sqlite: [
    'CREATE TABLE notes (id INTEGER PRIMARY KEY AUTOINCREMENT, user_id INTEGER, body varchar(100))',
    'CREATE TABLE posts (id INTEGER PRIMARY KEY AUTOINCREMENT, author_id INTEGER, title varchar(100), published BOOLEAN NOT NULL DEFAULT 0)',
    'CREATE TABLE plain (id INTEGER PRIMARY KEY AUTOINCREMENT, body varchar(100))',
    'CREATE TABLE docs (id INTEGER PRIMARY KEY AUTOINCREMENT, org_id INTEGER, title varchar(100), level INTEGER)',
  ],
};

export interface Account {
  readonly id: number;
  readonly username: string;
  readonly password: string;
  readonly token: string;
  /** `{Authorization: Bearer <token>}` */
  readonly auth: { readonly headers: Readonly<Record<string, string>> };
}

export interface PolicyContext {
  readonly kind: DialectName;
  readonly db: TestDatabase;
  readonly sql: RawSql;
  readonly server: TestServer;
  /** The server's config (auth enabled with `secret`): start another server like it. */
  readonly config: Config;
  readonly http: Client;
  readonly secret: string;
  readonly admin: Account;
  readonly alice: Account;
  readonly bob: Account;
  /** Signs a token with the server's secret (an "external" token when the claims say so). */
  mint(
    claims: Readonly<Record<string, unknown>>,
    options?: { readonly secret?: string; readonly alg?: string; readonly expiresIn?: number },
  ): Promise<string>;
}

export const bearer = (token: string): { readonly headers: Readonly<Record<string, string>> } => ({
  headers: { authorization: `Bearer ${token}` },
});

async function login(http: Client, username: string, password: string): Promise<string> {
  const reply = await http.post('/auth/login', { username, password });
  expect(reply.status, reply.text).toBe(200);
  return (reply.json as { token: string }).token;
}

async function register(http: Client, username: string): Promise<Account> {
  const password = `pw-${username}-${randomBytes(4).toString('hex')}`;
  const reply = await http.post('/auth/register', { username, password });
  expect(reply.status, reply.text).toBe(201);
  const { id } = reply.json as { id: number };
  const token = await login(http, username, password);
  return { id, username, password, token, auth: bearer(token) };
}

export interface SuiteOptions {
  /** Extra DDL run after the fixture tables. */
  readonly ddl?: Readonly<Record<DialectName, readonly string[]>>;
  /** Skip the automatic POST /auth/setup (the suite tests setup itself). */
  readonly noSetup?: boolean;
  /** PostgreSQL: native row-level security (-db.rls on) instead of the portable path. */
  readonly rls?: boolean;
  /** The URL the server connects with, given the test database's (e.g. through a counting proxy). */
  readonly serverDbUrl?: (dbUrl: string) => Promise<string>;
  /** The server's own password hasher (bcrypt cost 10) instead of test/support/server.ts's TEST_HASHER. */
  readonly hasher?: 'production';
  /**
   * PostgreSQL: `-db.pooler transaction`, `serverDbUrl` being the pooler's URL; `listen`: with
   * `-db.listen_url` the test database's own URL (else changes are polled).
   */
  readonly pooler?: { readonly listen: boolean };
  /** How often the server looks for a changed schema (default 1 s): suites that change it wait less. */
  readonly schemaCheckIntervalMs?: number;
}

/** Every database; PostgreSQL twice, with the portable path and with native RLS (docs/row-level-security.md). */
const SUITE_TARGETS: ReadonlyArray<{ readonly kind: DialectName; readonly rls: boolean }> = ALL_KINDS.flatMap(
  (kind): Array<{ kind: DialectName; rls: boolean }> =>
    kind === 'postgres'
      ? [
          { kind, rls: false },
          { kind, rls: true },
        ]
      : [{ kind, rls: false }],
);

/** Runs `body` once per database kind with a fresh database, server and accounts. */
export function forEachAuthDatabase(
  title: string,
  body: (ctx: () => PolicyContext, kind: DialectName) => void,
  options: SuiteOptions = {},
): void {
  for (const { kind, rls } of SUITE_TARGETS) {
    const reason = skipReason(kind);
    const label = kind === 'postgres' ? `${kind} rls=${rls ? 'on' : 'off'}` : kind;
    describe.skipIf(!isAvailable(kind))(
      `${title} [${label}]${reason === undefined ? '' : ` — ${reason}`}`,
      () => {
        let ctx: PolicyContext | undefined;
        beforeAll(async () => {
          ctx = await startAuthSuite(kind, { ...options, rls });
        });
        afterAll(async () => {
          await ctx?.server.handle.close();
          await ctx?.sql.close();
          await ctx?.db.drop();
        });
        body(() => {
          if (ctx === undefined) throw new Error('the suite did not start');
          return ctx;
        }, kind);
      },
    );
  }
}

export async function startAuthSuite(kind: DialectName, options: SuiteOptions = {}): Promise<PolicyContext> {
  const db = await createTestDatabase(kind);
  const sql = await openRawSql(db);
  for (const ddl of [...POLICY_DDL[kind], ...(options.ddl?.[kind] ?? [])]) await sql.exec(ddl);
  const secret = newSecret();
  const serverDbUrl = options.serverDbUrl === undefined ? db.url : await options.serverDbUrl(db.url);
  const config: Config = {
    ...testConfig(serverDbUrl),
    db: {
      url: serverDbUrl,
      rls: options.rls ?? false,
      ...(options.pooler === undefined
        ? {}
        : { pooler: 'transaction' as const, ...(options.pooler.listen ? { listenUrl: db.url } : {}) }),
    },
    auth: { enabled: true, secret, tokenTtlSeconds: 3600 },
  };
  const server = await startTestServer(config, {
    ...(options.hasher === undefined ? {} : { hasher: options.hasher }),
    ...(options.schemaCheckIntervalMs === undefined
      ? {}
      : { schemaCheckIntervalMs: options.schemaCheckIntervalMs }),
  });
  const http = client(server.url);
  const key = new TextEncoder().encode(secret);
  const mint: PolicyContext['mint'] = async (claims, o = {}) => {
    const jwt = new SignJWT({ ...claims })
      .setProtectedHeader({ alg: o.alg ?? 'HS256', typ: 'JWT' })
      .setIssuedAt();
    if (o.expiresIn !== undefined) jwt.setExpirationTime(Math.floor(Date.now() / 1000) + o.expiresIn);
    return jwt.sign(o.secret === undefined ? key : new TextEncoder().encode(o.secret));
  };
  const placeholder: Account = { id: 0, username: '', password: '', token: '', auth: { headers: {} } };
  if (options.noSetup === true) {
    return {
      kind,
      db,
      sql,
      server,
      config,
      http,
      secret,
      admin: placeholder,
      alice: placeholder,
      bob: placeholder,
      mint,
    };
  }
  const setup = await http.post('/auth/setup', {});
  expect(setup.status, setup.text).toBe(201);
  const { username, password } = setup.json as { username: string; password: string };
  const adminToken = await login(http, username, password);
  const adminId = Number((await sql.rows("SELECT id FROM auth_users WHERE username = 'admin'"))[0]?.['id']);
  const admin: Account = { id: adminId, username, password, token: adminToken, auth: bearer(adminToken) };
  const alice = await register(http, 'alice');
  const bob = await register(http, 'bob');
  return { kind, db, sql, server, config, http, secret, admin, alice, bob, mint };
}

/**
 * Replaces every policy except the three defaults (ids 1–3) through the API, as the admin; returns
 * the answer of the POST (undefined when there was nothing to add).
 */
export async function replacePolicies(
  ctx: PolicyContext,
  policies: ReadonlyArray<{
    readonly table_name: string;
    readonly action: string;
    readonly expression: string;
    readonly columns?: string | null;
  }>,
): Promise<Reply | undefined> {
  const cleared = await ctx.http.delete('/auth_policies?id=gt.3', ctx.admin.auth);
  expect(cleared.status, cleared.text).toBe(200);
  if (policies.length === 0) return undefined;
  const added = await ctx.http.post(
    '/auth_policies',
    policies.map((p) => ({ ...p, description: `test policy on ${p.table_name}` })),
    ctx.admin.auth,
  );
  expect(added.status, added.text).toBe(201);
  return added;
}

/** Replaces every policy except the three defaults (ids 1–3) through the API, as the admin. */
export async function setPolicies(
  ctx: PolicyContext,
  policies: Parameters<typeof replacePolicies>[1],
): Promise<void> {
  await replacePolicies(ctx, policies);
}

/** Rows of a table straight from the database, ordered by id, with numbers and booleans normalised. */
export async function tableRows(
  ctx: PolicyContext,
  table: string,
  columns: readonly string[],
): Promise<Array<Record<string, unknown>>> {
  const rows = await ctx.sql.rows(`SELECT ${columns.join(', ')} FROM ${table} ORDER BY id`);
  return rows.map((r) =>
    Object.fromEntries(
      columns.map((c) => {
        const v = r[c];
        if (typeof v === 'bigint') return [c, Number(v)];
        if (c === 'published' || c === 'is_admin')
          return [c, v === null ? null : v === true || v === 1 || v === '1'];
        return [c, v];
      }),
    ),
  );
}

/** Resets a table to exactly `rows` (raw SQL, values given as SQL literals). */
export async function resetRows(
  ctx: PolicyContext,
  table: string,
  columns: readonly string[],
  rows: ReadonlyArray<readonly (string | number | boolean | null)[]>,
): Promise<void> {
  await ctx.sql.exec(`DELETE FROM ${table}`);
  if (rows.length === 0) return;
  const literal = (v: string | number | boolean | null): string =>
    v === null
      ? 'NULL'
      : typeof v === 'string'
        ? `'${v.replaceAll("'", "''")}'`
        : typeof v === 'boolean'
          ? ctx.kind === 'postgres'
            ? String(v)
            : v
              ? '1'
              : '0'
          : String(v);
  await ctx.sql.exec(
    `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${rows.map((r) => `(${r.map(literal).join(', ')})`).join(', ')}`,
  );
  // Explicit ids do not move a PostgreSQL sequence; later inserts through the API must not collide.
  if (ctx.kind === 'postgres')
    await ctx.sql.exec(`SELECT setval(pg_get_serial_sequence('${table}', 'id'), 1000)`);
}

export const idsOf = (reply: Reply): number[] =>
  (reply.json as Array<{ id: unknown }>).map((r) => Number(r.id)).sort((a, b) => a - b);

export function expectStatus(reply: Reply, status: number, code?: string): void {
  const actual = {
    status: reply.status,
    code: (reply.json as { error?: { code?: unknown } } | undefined)?.error?.code,
  };
  expect(actual, reply.text).toEqual(code === undefined ? { status, code: actual.code } : { status, code });
}
