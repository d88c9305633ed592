// The console's own endpoints (docs/console.md), under /_/api/, for admins only: the table × action
// matrix for a caller, `policy explain` for a caller and an optional row, and "try as" (a request
// answered as a caller would be answered, a write rolled back). Everything else the console does
// goes through the API every client uses (/auth/login, /auth_policies).

import type { Request } from 'express';
import { ACTIONS, type Action, type AuthUser } from '../../compiler/types.js';
import { isRestError, RestError } from '../../errors/rest-error.js';
import { INTERNAL_TABLES } from '../auth/auth-ddl.js';
import type { DbAdapter, SchemaSnapshot, TableInfo } from '../db/adapter.js';
import type { Authorizer, PolicySource } from '../enforce/authorizer.js';
import { policyColumnTypes, schemaTypesOf } from '../enforce/decide.js';
import { denialStatus, policyDenied } from '../enforce/denials.js';
import { explainPolicy, type PolicyExplanation } from '../explain/explain-policy.js';
import { explainUser } from '../explain/explain-user.js';
import { handleTableRequest, type TableHandlerDeps } from '../handlers/table-handler.js';
import { clientGoneSignal } from '../http/client-gone.js';
import { pgrstAnswer } from '../http/pgrst-answer.js';
import { readJsonBody } from '../http/read-json-body.js';
import type { Authenticate, SchemaLookup } from '../http/rest-handler.js';
import { brokenPolicies, escalationsAmong, listPolicies } from '../policies/policy-service.js';
import { explainColumns } from '../explain/explain-columns.js';
import { indexedColumns } from '../policies/relation-health.js';
import { parsePgrstRequest } from '../request/parse-pgrst.js';
import { parseQuery } from '../request/parse-query.js';
import type { Operation } from '../request/parse-route.js';
import { rlsRoleFor } from '../rls/rls-ddl.js';
import { callerSpec } from './console-caller.js';
import type { CellDecision, Matrix, MatrixCell, MatrixTable, TryAnswer } from './console-types.js';
import type { Response } from 'express';
import type { Config } from '../config.js';

/**
 * Runs one policy test file (docs/policy-tests.md) on the database, rolled back: `rest policy
 * test`'s runPolicyTestFile, given by the composition root (runtime/policy-test is above this room).
 */
export type PolicyTestRunner = (
  source: string,
  name: string,
  options: { readonly adapter: DbAdapter; readonly config: Config },
) => Promise<unknown>;

export interface ConsoleApiDeps extends TableHandlerDeps {
  readonly adapter: DbAdapter;
  readonly schema: SchemaLookup;
  readonly authenticate: Authenticate;
  readonly policies: PolicySource;
  readonly authorizer: Authorizer;
  readonly config: Config;
  readonly nativeRls: boolean;
  /** Absent: `POST /_/api/test` is 404. */
  readonly policyTests?: PolicyTestRunner;
}

const isObject = (v: unknown): v is Readonly<Record<string, unknown>> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function stringField(
  body: Readonly<Record<string, unknown>>,
  field: string,
  required: boolean,
): string | undefined {
  const value = body[field];
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'string' || (required && value === '')) {
    throw new RestError('invalid_body', `"${field}" must be a string`, { details: { field } });
  }
  return value;
}

async function objectBody(req: Request): Promise<Readonly<Record<string, unknown>>> {
  const body = await readJsonBody(req);
  if (!isObject(body)) throw new RestError('invalid_body', 'the body must be a JSON object');
  return body;
}

/** The served table `name` of `snapshot`; the server's bookkeeping tables are not served. */
function servedTable(snapshot: SchemaSnapshot, name: string): TableInfo {
  const table = INTERNAL_TABLES.has(name) ? undefined : snapshot.tables.get(name);
  if (table === undefined) {
    throw new RestError('unknown_table', 'no such table', { details: { table: name.slice(0, 128) } });
  }
  return table;
}

function actionOf(value: string): Action {
  if (!(ACTIONS as readonly string[]).includes(value)) {
    throw new RestError('invalid_body', `"action" must be one of ${ACTIONS.join(', ')}`, {
      details: { field: 'action' },
    });
  }
  return value as Action;
}

async function matrix(deps: ConsoleApiDeps, user: AuthUser): Promise<Matrix> {
  const snapshot = await deps.schema.get();
  const { compiled } = await deps.policies.get();
  const rows = compiled.policies.map((p) => p.row);
  const broken = brokenPolicies(rows, snapshot);
  const schemaTypes = schemaTypesOf(snapshot);
  // Column access is shown once some stored row has a column rule (NULL, empty or * is none).
  const columnRules = rows.some((r) => !['', '*'].includes((r.columns ?? '').trim()));
  const tables = [...snapshot.tables.values()]
    .filter((t) => !INTERNAL_TABLES.has(t.name))
    .sort((a, b) => a.name.localeCompare(b.name));
  const out: MatrixTable[] = [];
  for (const table of tables) {
    const columnTypes = policyColumnTypes(table);
    const cells: Partial<Record<Action, MatrixCell>> = {};
    for (const action of ACTIONS) {
      const policy = compiled.policyFor(table.name, action, columnTypes, schemaTypes);
      // The server's own authorizer decides, auth-table guards included.
      const authorization = await deps.authorizer.authorize({ table, action, user, schema: snapshot });
      const decision: CellDecision =
        authorization.kind === 'deny' ? 'deny' : policy.decide(user).kind === 'allow' ? 'allow' : 'filter';
      cells[action] = {
        decision,
        ...(decision === 'deny' ? { status: denialStatus(user) } : {}),
        policies: policy.resolution.rows.map((r) => r.id),
        level: policy.resolution.level,
      };
    }
    out.push({
      table: table.name,
      key: table.primaryKey,
      columns: table.columns.map((c) => c.name),
      cells: cells as Record<Action, MatrixCell>,
      ...(columnRules ? { column_access: explainColumns(compiled, table, snapshot, user) } : {}),
    });
  }
  return {
    database: deps.adapter.kind,
    native_rls: deps.nativeRls,
    user,
    tables: out,
    broken: [...broken].map(([id, b]) => ({ id, error: b.message })),
    escalations: escalationsAmong(rows, snapshot, broken),
  };
}

async function explain(
  deps: ConsoleApiDeps,
  user: AuthUser,
  body: Readonly<Record<string, unknown>>,
): Promise<PolicyExplanation> {
  const snapshot = await deps.schema.get();
  const table = servedTable(snapshot, stringField(body, 'table', true) ?? '');
  const action = actionOf(stringField(body, 'action', true) ?? '');
  const row = stringField(body, 'row', false);
  const { adapter } = deps;
  return explainPolicy({
    rows: await listPolicies(adapter),
    table,
    schema: snapshot,
    indexes: await indexedColumns(adapter, snapshot),
    action,
    user,
    adapter,
    ...(row === undefined || row === '' ? {} : { row: { key: row, db: adapter } }),
    authEnabled: true,
    nativeRls: deps.nativeRls,
    rlsRole: adapter.kind === 'postgres' ? await rlsRoleFor(adapter, deps.config.db.url) : undefined,
  });
}

const OPERATIONS: Readonly<Record<string, Operation>> = {
  GET: 'read',
  POST: 'create',
  PATCH: 'update',
  DELETE: 'delete',
};

/** The request as `/rest/v1/<table>?<query>` would be answered for `user`; a write is rolled back. */
async function tryAs(
  deps: ConsoleApiDeps,
  user: AuthUser,
  body: Readonly<Record<string, unknown>>,
  res: Response,
): Promise<TryAnswer> {
  const method = (stringField(body, 'method', true) ?? '').toUpperCase();
  const operation = OPERATIONS[method];
  if (operation === undefined) {
    throw new RestError('invalid_body', '"method" must be GET, POST, PATCH or DELETE', {
      details: { field: 'method' },
    });
  }
  const snapshot = await deps.schema.get();
  const table = servedTable(snapshot, stringField(body, 'table', true) ?? '');
  const query = (stringField(body, 'query', false) ?? '').replace(/^\?/, '');
  const writes = operation !== 'read';
  try {
    const { request, answer } = parsePgrstRequest({
      table: table.name,
      operation,
      method,
      query: parseQuery(query),
      headers: { prefer: writes ? ['tx=rollback', 'return=representation'] : [], accept: undefined },
      body: operation === 'create' || operation === 'update' ? (body['body'] as never) : undefined,
      maxRows: deps.config.http.maxRows,
    });
    const outcome = await handleTableRequest(deps, request, table, user, snapshot, clientGoneSignal(res));
    const reply = pgrstAnswer(outcome, answer);
    return { status: reply.status, body: reply.body ?? null, rolled_back: writes };
  } catch (e) {
    // The caller's answer, refusals included, is the result; only a broken invariant is ours.
    if (!isRestError(e) || e.category === 'internal') throw e;
    return { status: e.status, body: e.toBody(), rolled_back: writes };
  }
}

type Endpoint = (deps: ConsoleApiDeps, user: AuthUser, req: Request, res: Response) => Promise<unknown>;

const endpoints: Readonly<Record<string, Endpoint>> = {
  test: async (deps, _admin, req) => {
    if (deps.policyTests === undefined) throw new RestError('not_found', 'no such endpoint');
    const body = await objectBody(req);
    const source = stringField(body, 'source', true) ?? '';
    const name = stringField(body, 'name', false) ?? 'console.yaml';
    return deps.policyTests(source, name, { adapter: deps.adapter, config: deps.config });
  },
  matrix: async (deps, _admin, req) =>
    matrix(deps, await explainUser(deps.adapter, callerSpec((await objectBody(req))['caller']))),
  explain: async (deps, _admin, req) => {
    const body = await objectBody(req);
    return explain(deps, await explainUser(deps.adapter, callerSpec(body['caller'])), body);
  },
  try: async (deps, _admin, req, res) => {
    const body = await objectBody(req);
    return tryAs(deps, await explainUser(deps.adapter, callerSpec(body['caller'])), body, res);
  },
};

export const CONSOLE_API_PREFIX = '/_/api/';

/** `POST /_/api/<name>`: an admin's token or the one 401/403 of runtime/enforce/denials.ts. */
export async function serveConsoleApi(
  deps: ConsoleApiDeps,
  path: string,
  req: Request,
  res: Response,
): Promise<{ readonly status: number; readonly body: unknown }> {
  const name = path.slice(CONSOLE_API_PREFIX.length);
  const endpoint = Object.hasOwn(endpoints, name) ? endpoints[name] : undefined;
  if (endpoint === undefined) throw new RestError('not_found', 'no such endpoint');
  const user = await deps.authenticate(req);
  if (!user.is_admin) {
    throw policyDenied(user, path, { message: 'the console is for admins: log in as an admin' });
  }
  if (req.method !== 'POST') {
    throw new RestError('method_not_allowed', 'use POST', { headers: { Allow: 'POST' } });
  }
  return { status: 200, body: await endpoint(deps, user, req, res) };
}
