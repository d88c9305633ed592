// `/_/`: the policy console (docs/console.md) — its static files and its admin-only API — mounted
// as one handler among the app's. Every other request passes through with one string comparison.

import type { Request, RequestHandler, Response } from 'express';
import { RestError } from '../../errors/rest-error.js';
import { sendJson } from '../http/send-json.js';
import type { Logger } from '../logger.js';
import type { ConsoleAssets } from './console-assets.js';
import { CONSOLE_API_PREFIX, serveConsoleApi, type ConsoleApiDeps } from './console-api.js';

export const CONSOLE_PATH = '/_/';

/**
 * The console owns `/_` and everything under `/_/`: a table named `_` cannot be reached there
 * while it is on. The server says so at start-up and in the answer to any request at `/_` that is
 * not the page's (docs/console.md).
 */
export const SHADOWED_TABLE = '_';
export const SHADOWED_HINT =
  'a table named "_" is not served at /_ while the console is on: use /rest/v1/_ or -http.console off';

// Nothing but this origin's own files and API: the console loads nothing from another host.
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

export interface ConsoleRoutesDeps {
  readonly api: ConsoleApiDeps;
  readonly assets: ConsoleAssets;
  readonly logger: Logger;
}

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

function sendFile(deps: ConsoleRoutesDeps, req: Request, res: Response, path: string): void {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    throw new RestError('method_not_allowed', `use GET: /_/ is the policy console; ${SHADOWED_HINT}`, {
      headers: { Allow: 'GET, HEAD' },
      details: { console: CONSOLE_PATH },
    });
  }
  const name = path.slice(CONSOLE_PATH.length);
  // Any path that is not an asset is the page itself (its views are not separate documents).
  const file = deps.assets.file(name.startsWith('assets/') ? name : 'index.html');
  if (file === undefined) {
    throw new RestError(
      'not_found',
      name.startsWith('assets/') ? 'no such file' : 'the console was not built: run npm run build',
    );
  }
  res.statusCode = 200;
  res.setHeader('Content-Type', file.type);
  res.setHeader('Content-Length', file.bytes.length);
  res.setHeader('Cache-Control', file.cacheControl);
  res.setHeader('Content-Security-Policy', CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.end(req.method === 'HEAD' ? undefined : file.bytes);
}

/** A start-up warning when the database has a table the console's path hides. */
function warnIfShadowed(deps: ConsoleRoutesDeps): void {
  void deps.api.schema.get().then(
    (snapshot) => {
      if (snapshot.tables.has(SHADOWED_TABLE))
        deps.logger.warn({ table: SHADOWED_TABLE, console: CONSOLE_PATH }, SHADOWED_HINT);
    },
    // An unreachable database is reported by the requests that need it.
    () => undefined,
  );
}

export function consoleRoutes(deps: ConsoleRoutesDeps): RequestHandler {
  warnIfShadowed(deps);
  return (req: Request, res: Response, next): Promise<void> | undefined => {
    if (!req.url.startsWith('/_')) {
      next();
      return undefined;
    }
    const path = pathOf(req.url);
    if (path === '/_') {
      // A browser's way in; anything else here was meant for a table named `_`.
      if ((req.method !== 'GET' && req.method !== 'HEAD') || path !== req.url) {
        throw new RestError('not_found', `/_ is the policy console's; ${SHADOWED_HINT}`, {
          details: { console: CONSOLE_PATH },
        });
      }
      res.statusCode = 308;
      res.setHeader('Location', CONSOLE_PATH);
      res.end();
      return undefined;
    }
    if (!path.startsWith(CONSOLE_PATH)) {
      next();
      return undefined;
    }
    if (path.startsWith(CONSOLE_API_PREFIX)) {
      return serveConsoleApi(deps.api, path, req, res).then(({ status, body }) => {
        res.setHeader('Cache-Control', 'no-store');
        sendJson(res, status, body);
      });
    }
    sendFile(deps, req, res, path);
    return undefined;
  };
}
