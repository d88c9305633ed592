// createApp(deps): wiring only. Every effect (database, schema, log, clock, auth) is injected;
// the composition root is runtime/server/server.ts.

import express, {
  type Express,
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import type { DbAdapter } from '../db/adapter.js';
import { parseDbUrl } from '../db/parse-db-url.js';
import type { Config } from '../config.js';
import type { RequestRunner } from '../enforce/request-runner.js';
import { authDisabledRoutes } from '../http/auth-routes.js';
import { commonHeaders, requestIdFrom } from '../http/common-headers.js';
import { corsMiddleware } from '../http/cors.js';
import { errorMiddleware } from '../http/error-middleware.js';
import { oneLayer } from '../http/one-layer.js';
import { openApiHandler } from '../http/openapi-handler.js';
import { createOpenApiService } from '../openapi/openapi-service.js';
import type { PolicySource } from '../enforce/authorizer.js';
import { policyWriteWarnings } from '../http/policy-write-warnings.js';
import { restHandler, type Authenticate, type SchemaLookup } from '../http/rest-handler.js';
import type { Logger } from '../logger.js';
import type { Authorizer } from '../enforce/authorizer.js';
import { consoleAssets } from '../console/console-assets.js';
import { consoleRoutes } from '../console/console-routes.js';
import type { PolicyTestRunner } from '../console/console-api.js';

export interface Clock {
  /** Milliseconds, monotonic enough for durations. */
  now(): number;
}

export const systemClock: Clock = { now: () => performance.now() };

export interface AppDeps {
  readonly adapter: DbAdapter;
  readonly schema: SchemaLookup;
  readonly logger: Logger;
  readonly config: Config;
  readonly clock: Clock;
  /** The request's user; ANONYMOUS while auth is disabled. */
  readonly authenticate: Authenticate;
  readonly authorizer: Authorizer;
  readonly runner: RequestRunner;
  /** The /auth/* endpoints (docs/authentication.md), present exactly when auth is enabled; else 404 `auth_disabled`. */
  readonly authRoutes?: RequestHandler;
  /** The compiled policies the authorizer decides with, for the OpenAPI document; absent while auth is disabled. */
  readonly policies?: PolicySource;
  /** The console's policy test runner (docs/console.md); absent: the console runs no test files. */
  readonly policyTests?: PolicyTestRunner;
}

function accessLog(logger: Logger, clock: Clock) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (logger.isLevelEnabled('debug')) {
      const start = clock.now();
      res.once('finish', () => {
        const ms = Math.round((clock.now() - start) * 10) / 10;
        logger.debug(
          { requestId: requestIdFrom(res), method: req.method, path: req.path, status: res.statusCode, ms },
          'request',
        );
      });
    }
    next();
  };
}

/** `public` (what supabase-js sends) and the database's own default schema (docs/postgrest.md). */
function servedProfiles(url: string): readonly string[] {
  const parsed = parseDbUrl(url);
  const own = parsed.kind === 'sqlite' ? 'main' : parsed.kind === 'mysql' ? parsed.database : 'public';
  return [...new Set(['public', own])];
}

/** The console at `/_/` (docs/console.md): on unless `-http.console off`, and only with auth enabled. */
function consoleHandler(deps: AppDeps): RequestHandler[] {
  if (deps.config.http.console === false || deps.policies === undefined) return [];
  const { adapter } = deps;
  return [
    consoleRoutes({
      assets: consoleAssets(),
      logger: deps.logger,
      api: {
        adapter,
        schema: deps.schema,
        authenticate: deps.authenticate,
        policies: deps.policies,
        authorizer: deps.authorizer,
        runner: deps.runner,
        dialect: adapter.dialect,
        returning: adapter.returning,
        config: deps.config,
        nativeRls: adapter.kind === 'postgres' && deps.config.db.rls,
        ...(deps.policyTests === undefined ? {} : { policyTests: deps.policyTests }),
      },
    }),
  ];
}

export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', false);
  app.use(
    oneLayer([
      commonHeaders,
      accessLog(deps.logger, deps.clock),
      corsMiddleware(deps.config.cors),
      deps.authRoutes ?? authDisabledRoutes(),
      ...consoleHandler(deps),
      openApiHandler({
        openapi: createOpenApiService({ schema: deps.schema, policies: deps.policies }),
        authenticate: deps.authenticate,
      }),
      policyWriteWarnings({ adapter: deps.adapter, schema: deps.schema, logger: deps.logger }),
      restHandler({
        adapter: deps.adapter,
        schema: deps.schema,
        authenticate: deps.authenticate,
        authEnabled: deps.config.auth.enabled,
        maxRows: deps.config.http.maxRows,
        profiles: servedProfiles(deps.config.db.url),
        authorizer: deps.authorizer,
        runner: deps.runner,
        dialect: deps.adapter.dialect,
        returning: deps.adapter.returning,
      }),
    ]),
  );
  app.use(errorMiddleware(deps.logger, { schemaChanged: () => deps.schema.invalidate() }));
  return app;
}
