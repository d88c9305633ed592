// The express handler of every endpoint: route → (health | authenticate → table → body → parse →
// table handler) → JSON. Errors are thrown to the error middleware.

import type { Request, RequestHandler, Response } from 'express';
import type { AuthUser } from '../../compiler/types.js';
import { RestError } from '../../errors/rest-error.js';
import type { DbAdapter, SchemaSnapshot, TableInfo } from '../db/adapter.js';
import { INTERNAL_TABLES } from '../auth/auth-ddl.js';
import { checkHealth } from '../handlers/health-handler.js';
import { handleTableRequest, type TableHandlerDeps } from '../handlers/table-handler.js';
import { parseQuery } from '../request/parse-query.js';
import { parsePgrstRequest } from '../request/parse-pgrst.js';
import { unsupportedFeature } from '../request/parse-pgrst-filter.js';
import { parseTableRequest } from '../request/parse-request.js';
import { parseRoute, type Route } from '../request/parse-route.js';
import { pgrstAnswer } from './pgrst-answer.js';
import { isPgrstPath, PGRST_PREFIX } from './pgrst-errors.js';
import { clientGoneSignal } from './client-gone.js';
import { readJsonBody } from './read-json-body.js';
import { seedAnswer } from './seed-answer.js';
import { sendJson } from './send-json.js';

/** Finds a served table by its exact name; undefined when the schema has no such table. */
export interface SchemaLookup {
  table(name: string): Promise<TableInfo | undefined>;
  /** The current snapshot (policies with subqueries read its other tables). */
  get(): Promise<SchemaSnapshot>;
  /** A statement met another schema than the snapshot's: look again before the next request. */
  invalidate(): void;
}

export type Authenticate = (req: Request) => AuthUser | Promise<AuthUser>;

export interface RestHandlerDeps extends TableHandlerDeps {
  readonly adapter: DbAdapter;
  readonly schema: SchemaLookup;
  readonly authenticate: Authenticate;
  readonly authEnabled: boolean;
  /** Most rows in one `POST` array (`-http.max_rows`). */
  readonly maxRows: number;
  /**
   * The schema names `Accept-Profile`/`Content-Profile` may give (docs/postgrest.md): `public`
   * and the database's own default schema.
   */
  readonly profiles: readonly string[];
}

const MAX_NAME_IN_DETAILS = 128;

/** The table and the snapshot it was found in. */
async function findTable(
  schema: SchemaLookup,
  name: string,
): Promise<{ readonly table: TableInfo; readonly snapshot: SchemaSnapshot }> {
  // The server's own bookkeeping (login counters, sessions) is never served, as if absent.
  const table = INTERNAL_TABLES.has(name) ? undefined : await schema.table(name);
  const snapshot = await schema.get();
  if (table === undefined) {
    throw new RestError('unknown_table', 'no such table', {
      details: { table: name.slice(0, MAX_NAME_IN_DETAILS) },
    });
  }
  // The table as the snapshot holds it: a refresh may land between the two reads.
  return { table: snapshot.tables.get(name) ?? table, snapshot };
}

function splitUrl(url: string): { readonly path: string; readonly query: URLSearchParams } {
  const q = url.indexOf('?');
  return q === -1
    ? { path: url, query: new URLSearchParams() }
    : { path: url.slice(0, q), query: parseQuery(url.slice(q + 1)) };
}

type TableRoute = Extract<Route, { kind: 'table' }>;

/** `/rest/v1/<table>`: the PostgREST dialect's route; RPC and anything deeper are refused by name. */
function pgrstRoute(method: string, path: string): TableRoute {
  const rest = path.slice(PGRST_PREFIX.length);
  const route = parseRoute(method, rest === '' ? '/' : rest);
  if (route.kind === 'health') throw new RestError('not_found', 'no such endpoint');
  if (route.table === 'rpc' && route.key !== undefined) throw unsupportedFeature('calling functions (RPC)');
  if (route.key !== undefined)
    throw new RestError('not_found', 'no such endpoint; filter on the key, like ?id=eq.1');
  return route;
}

function checkProfile(req: Request, profiles: readonly string[]): void {
  const reading = req.method === 'GET' || req.method === 'HEAD';
  const header = reading ? 'accept-profile' : 'content-profile';
  const value = req.headers[header];
  if (value === undefined) return;
  const name = Array.isArray(value) ? value.join(',') : value;
  if (!profiles.includes(name.trim())) {
    throw new RestError(
      'unsupported_profile',
      `the schema ${name.slice(0, 64)} is not served; use ${profiles.join(' or ')}`,
      {
        details: { header, schemas: profiles },
      },
    );
  }
}

const headerList = (value: string | string[] | undefined): readonly string[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];

async function servePgrst(
  deps: RestHandlerDeps,
  req: Request,
  res: Response,
  path: string,
  query: URLSearchParams,
): Promise<void> {
  const route = pgrstRoute(req.method, path);
  checkProfile(req, deps.profiles);
  const user = await deps.authenticate(req);
  const { table, snapshot } = await findTable(deps.schema, route.table);
  const writesBody = route.operation === 'create' || route.operation === 'update';
  const body = writesBody ? await readJsonBody(req) : undefined;
  const { request, answer } = parsePgrstRequest({
    table: route.table,
    operation: route.operation,
    method: req.method,
    query,
    headers: { prefer: headerList(req.headers.prefer), accept: req.headers.accept },
    body,
    maxRows: deps.maxRows,
  });
  const reply = pgrstAnswer(
    await handleTableRequest(deps, request, table, user, snapshot, clientGoneSignal(res)),
    answer,
  );
  for (const [name, value] of Object.entries(reply.headers)) res.setHeader(name, value);
  if (reply.body === undefined) {
    res.statusCode = reply.status;
    res.end();
    return;
  }
  sendJson(res, reply.status, reply.body);
}

export function restHandler(deps: RestHandlerDeps): RequestHandler {
  return async (req: Request, res: Response): Promise<void> => {
    const { path, query } = splitUrl(req.url);
    if (isPgrstPath(path)) {
      await servePgrst(deps, req, res, path, query);
      return;
    }
    const route = parseRoute(req.method, path);
    if (route.kind === 'health') {
      const result = await checkHealth(deps.adapter, deps.authEnabled);
      sendJson(res, result.status, result.body);
      return;
    }
    const user = await deps.authenticate(req);
    const { table, snapshot } = await findTable(deps.schema, route.table);
    const writesBody = route.operation === 'create' || route.operation === 'update';
    const body = writesBody ? await readJsonBody(req) : undefined;
    const request = parseTableRequest({ ...route, query, body, maxRows: deps.maxRows });
    const result = seedAnswer(
      await handleTableRequest(deps, request, table, user, snapshot, clientGoneSignal(res)),
    );
    sendJson(res, result.status, result.body);
  };
}
