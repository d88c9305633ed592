// One run of a policy test file on one enforcement path, inside one rolled-back transaction
// (pinned-adapter.ts): fixtures written, policies replaced, then every case sent as an HTTP
// request to the same app a server serves (createApp, on an ephemeral local port) with the same
// authorizer and runner — only the caller is given directly instead of through a token — and
// every matrix cell decided as `policy explain` decides it.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { compilePolicySet, type PolicySet } from '../../compiler/policy-set.js';
import { SqlBuilder, renderSql } from '../../compiler/sql/fragment.js';
import { ACTIONS, ANONYMOUS, type Action, type AuthUser } from '../../compiler/types.js';
import { RestError, isRestError } from '../../errors/rest-error.js';
import {
  AUTH_POLICIES_TABLE,
  AUTH_USERS_TABLE,
  INTERNAL_TABLES,
  USERNAME_KEY_COLUMN,
} from '../auth/auth-ddl.js';
import { createPasswordHasher } from '../auth/passwords.js';
import { usernameKey } from '../auth/usernames.js';
import { insertUser } from '../auth/users.js';
import type { Config } from '../config.js';
import type { DbAdapter, SchemaSnapshot, TableInfo } from '../db/adapter.js';
import { createSchemaCache } from '../db/schema-cache.js';
import { createPortableAuthorizer } from '../enforce/portable-authorizer.js';
import { adapterRunner } from '../enforce/request-runner.js';
import { explainPolicy, type PolicyExplanation } from '../explain/explain-policy.js';
import { explainUser } from '../explain/explain-user.js';
import { createLogger } from '../logger.js';
import { policyInvalidatingRunner, withAuthTableGuards } from '../policies/auth-table-guards.js';
import { createPolicyCache } from '../policies/policy-cache.js';
import { addPolicy, listPolicies } from '../policies/policy-service.js';
import { rlsRoleFor } from '../rls/rls-ddl.js';
import { createApp, systemClock } from '../server/app.js';
import { withRolledBackAdapter } from './pinned-adapter.js';
import { fileError, type Caller, type Located, type TestCase, type TestFile } from './test-file.js';
import { checkExpectation, observe, type Observed } from './expectations.js';

export type PathName = 'portable' | 'native';

/** What one case (or matrix cell) did on one path. */
export interface PathOutcome {
  readonly passed: boolean;
  /** What differs from the expectation, one sentence each; empty when it passed. */
  readonly problems: readonly string[];
  readonly observed: Observed;
  /** The `policy explain` of the case for its caller, table and action; present when it failed. */
  readonly explain?: PolicyExplanation;
}

export interface CheckedItem extends Located {
  readonly name: string;
  readonly kind: 'case' | 'matrix';
}

export interface PathRun {
  readonly path: PathName;
  readonly items: readonly CheckedItem[];
  readonly outcomes: readonly PathOutcome[];
}

export interface RunPathOptions {
  readonly adapter: DbAdapter;
  readonly config: Config;
  readonly path: PathName;
}

const CALLER_HEADER = 'x-rest-policy-test-caller';
/** Stored as a fixture user's password: no bcrypt hash, so no password ever matches it. */
const NO_PASSWORD = '!policy-test';

/** A request's action, as the server derives it from the method (and `?mine`). */
function actionOf(method: string, path: string): Action {
  switch (method) {
    case 'POST':
      return 'create';
    case 'PUT':
    case 'PATCH':
      return 'update';
    case 'DELETE':
      return 'delete';
    default:
      return /[?&]mine(=|&|$)/.test(path) ? 'read_mine' : 'read';
  }
}

/** The table a request path addresses, in either dialect (`/t…`, `/rest/v1/t…`). */
function tableOf(path: string): string {
  const bare = path.split('?')[0] ?? '';
  const segments = bare.split('/').filter((s) => s !== '');
  const name = segments[0] === 'rest' && segments[1] === 'v1' ? segments[2] : segments[0];
  return decodeURIComponent(name ?? '');
}

/** A served table by name, else an invalid file at `where`. */
function servedTable(file: string, schema: SchemaSnapshot, name: string, where: Located): TableInfo {
  const table = INTERNAL_TABLES.has(name) ? undefined : schema.tables.get(name);
  if (table === undefined) throw fileError(file, where, `table "${name}" does not exist or is not served`);
  return table;
}

/** In columns of an integer type, a fixture user's name stands for that user's id. */
function withUserIds(
  table: TableInfo | undefined,
  values: Readonly<Record<string, unknown>>,
  ids: ReadonlyMap<string, number>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [column, value] of Object.entries(values)) {
    const id = typeof value === 'string' ? ids.get(value) : undefined;
    out[column] = id !== undefined && table?.columnsByName.get(column)?.type === 'integer' ? id : value;
  }
  return out;
}

function substituteBody(
  table: TableInfo | undefined,
  body: unknown,
  ids: ReadonlyMap<string, number>,
): unknown {
  const one = (v: unknown): unknown =>
    typeof v === 'object' && v !== null && !Array.isArray(v)
      ? withUserIds(table, v as Record<string, unknown>, ids)
      : v;
  return Array.isArray(body) ? body.map(one) : one(body);
}

async function insertRow(
  db: DbAdapter,
  table: TableInfo,
  values: Readonly<Record<string, unknown>>,
): Promise<void> {
  const names = Object.keys(values);
  const b = new SqlBuilder(db.dialect).append('INSERT INTO ').appendIdent(table.name).append(' (');
  names.forEach((n, i) => b.append(i === 0 ? '' : ', ').appendIdent(n));
  b.append(') VALUES (');
  names.forEach((n, i) => b.append(i === 0 ? '' : ', ').appendValue(values[n]));
  b.append(')');
  await db.query(renderSql(db.dialect, b.build()));
}

/** PostgreSQL: a sequence is moved past the keys the fixtures gave (MariaDB and SQLite do it themselves). */
async function movePastFixtures(db: DbAdapter, tables: Iterable<TableInfo>): Promise<void> {
  if (db.kind !== 'postgres') return;
  for (const table of tables) {
    for (const column of table.columns.filter((c) => c.autoIncrement)) {
      const t = db.dialect.quoteIdent(table.name);
      const c = db.dialect.quoteIdent(column.name);
      await db.query({
        text: `SELECT setval(pg_get_serial_sequence($1, $2), GREATEST((SELECT max(${c}) FROM ${t}), 1))`,
        values: [t, column.name],
      });
    }
  }
}

async function writeFixtures(
  db: DbAdapter,
  file: TestFile,
  schema: SchemaSnapshot,
): Promise<Map<string, number>> {
  if (!schema.tables.has(AUTH_USERS_TABLE) || !schema.tables.has(AUTH_POLICIES_TABLE)) {
    throw new RestError('not_setup', 'auth is not set up on this database: run `rest auth setup` first');
  }
  const ids = new Map<string, number>();
  for (const user of file.users) {
    try {
      const stored = await insertUser(db, db.dialect, {
        username: user.name,
        password: NO_PASSWORD,
        is_admin: user.isAdmin,
        [USERNAME_KEY_COLUMN]: usernameKey(user.name),
      });
      ids.set(user.name, stored.id);
    } catch (e) {
      if (isRestError(e) && e.category !== 'unavailable' && e.category !== 'internal')
        throw fileError(file.name, user, `fixture user "${user.name}": ${e.message}`);
      throw e;
    }
  }
  if (file.policies !== undefined) {
    await db.query({ text: `DELETE FROM ${db.dialect.quoteIdent(AUTH_POLICIES_TABLE)}`, values: [] });
    for (const p of file.policies) {
      try {
        await addPolicy(db, schema, {
          table_name: p.table,
          action: p.action,
          expression: p.expression,
          description: p.description,
          ...(p.columns === undefined ? {} : { columns: p.columns }),
        });
      } catch (e) {
        if (isRestError(e) && e.category === 'invalid_input') throw fileError(file.name, p, e.message);
        throw e;
      }
    }
  }
  const touched = new Map<string, TableInfo>();
  for (const row of file.rows) {
    const table = servedTable(file.name, schema, row.table, row);
    touched.set(table.name, table);
    try {
      await insertRow(db, table, withUserIds(table, row.values, ids));
    } catch (e) {
      if (isRestError(e) && e.category !== 'unavailable' && e.category !== 'internal')
        throw fileError(file.name, row, `fixture row of ${row.table}: ${e.message}`);
      throw e;
    }
  }
  await movePastFixtures(db, touched.values());
  return ids;
}

async function resolveCaller(db: DbAdapter, file: string, caller: Caller, where: Located): Promise<AuthUser> {
  try {
    switch (caller.kind) {
      case 'anonymous':
        return ANONYMOUS;
      case 'admin':
        return await explainUser(db, { kind: 'some_admin', claims: {} });
      case 'user':
        return await explainUser(db, { kind: 'stored', ref: caller.name, claims: {} });
      case 'claims':
        return await explainUser(db, { kind: 'token', claims: caller.claims });
    }
  } catch (e) {
    if (isRestError(e) && e.category !== 'unavailable' && e.category !== 'internal')
      throw fileError(file, where, e.message);
    throw e;
  }
}

function listen(server: Server): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve(`http://127.0.0.1:${port}`);
    });
  });
}

/** Runs `file` on one path in a transaction that is rolled back, whatever happens. */
export function runPath(file: TestFile, options: RunPathOptions): Promise<PathRun> {
  const { config, path } = options;
  return withRolledBackAdapter(options.adapter, async (db) => {
    const schema = await db.introspect();
    const ids = await writeFixtures(db, file, schema);
    const logger = createLogger({ level: 'silent' });
    const policies = createPolicyCache<PolicySet>({
      load: () => listPolicies(db),
      compile: (rows) => compilePolicySet(rows, db.dialect),
      changes: { kind: 'push', subscribe: () => ({ close: () => Promise.resolve() }) },
    });
    const native =
      path === 'native'
        ? await (
            await import('../rls/native-rls.js')
          ).startNativeRls({
            adapter: db,
            url: undefined,
            policies,
            logger,
            tamperWatch: false,
          })
        : undefined;
    const callers = new Map<string, AuthUser>();
    const callerOf = async (caller: Caller, where: Located): Promise<AuthUser> => {
      const key = JSON.stringify(caller);
      let user = callers.get(key);
      if (user === undefined) {
        user = await resolveCaller(db, file.name, caller, where);
        callers.set(key, user);
      }
      return user;
    };
    for (const c of file.cases) await callerOf(c.as, c);
    for (const m of file.matrix) {
      await callerOf(m.as, m);
      servedTable(file.name, schema, m.table, m);
    }
    const app = createApp({
      adapter: db,
      schema: createSchemaCache(db),
      logger,
      config: { ...config, auth: { ...config.auth, enabled: true } },
      clock: systemClock,
      authenticate: (req) => callers.get(String(req.headers[CALLER_HEADER])) ?? ANONYMOUS,
      authorizer: withAuthTableGuards(native?.authorizer ?? createPortableAuthorizer({ policies }), {
        schema: () => db.introspect(),
        hasher: createPasswordHasher(),
      }),
      runner: policyInvalidatingRunner(native?.runner ?? adapterRunner(db), () => policies.invalidate()),
      policies,
    });
    const server = createServer(app);
    const base = await listen(server);
    const rlsRole = db.kind === 'postgres' ? await rlsRoleFor(db, config.db.url) : undefined;
    const explainFor = async (
      user: AuthUser,
      tableName: string,
      action: Action,
    ): Promise<PolicyExplanation | undefined> => {
      const table = schema.tables.get(tableName);
      if (table === undefined) return undefined;
      return explainPolicy({
        rows: await listPolicies(db),
        table,
        schema,
        action,
        user,
        adapter: db,
        authEnabled: true,
        nativeRls: path === 'native',
        rlsRole,
      });
    };
    const items: CheckedItem[] = [];
    const outcomes: PathOutcome[] = [];
    try {
      for (const c of file.cases) {
        items.push({ name: c.name, kind: 'case', line: c.line, column: c.column });
        outcomes.push(await runCase(c));
      }
      for (const m of file.matrix) {
        const user = await callerOf(m.as, m);
        for (const action of ACTIONS) {
          items.push({
            name: `matrix ${m.callerText} ${m.table} ${action}`,
            kind: 'matrix',
            line: m.line,
            column: m.column,
          });
          const explain = await explainFor(user, m.table, action);
          const decision = explain?.decision.kind ?? 'deny';
          const allowed = decision !== 'deny';
          const expected = m.allow.has(action);
          const passed = allowed === expected;
          const observed: Observed = { decision: explain?.decision.kind ?? 'deny' };
          outcomes.push({
            passed,
            problems: passed ? [] : [`expected ${expected ? 'allowed' : 'denied'}, got ${decision}`],
            observed,
            ...(passed || explain === undefined ? {} : { explain }),
          });
        }
      }
    } finally {
      // Every request has been answered: its kept-alive connections need not wait out their timeout.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      native?.close();
      await policies.close();
    }
    return { path, items, outcomes };

    async function runCase(c: TestCase): Promise<PathOutcome> {
      const user = await callerOf(c.as, c);
      const tableName = tableOf(c.path);
      const table = schema.tables.get(tableName);
      const headers: Record<string, string> = { [CALLER_HEADER]: JSON.stringify(c.as) };
      let body: string | undefined;
      if (c.body !== undefined) {
        headers['content-type'] = 'application/json';
        body = JSON.stringify(substituteBody(table, c.body, ids));
      }
      const response = await fetch(`${base}${c.path}`, {
        method: c.method,
        headers,
        ...(body === undefined ? {} : { body }),
      });
      const textBody = await response.text();
      let parsed: unknown;
      try {
        parsed = textBody === '' ? undefined : JSON.parse(textBody);
      } catch {
        parsed = textBody;
      }
      const observed = observe(response.status, parsed, table);
      const problems = checkExpectation(c.expect, observed);
      if (problems.length === 0) return { passed: true, problems, observed };
      const explain = await explainFor(user, tableName, actionOf(c.method, c.path));
      return { passed: false, problems, observed, ...(explain === undefined ? {} : { explain }) };
    }
  });
}
