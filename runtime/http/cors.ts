// CORS from the config: an origin is echoed only when listed (never `null`), always with
// `Vary: Origin`; preflights are answered here, without touching the database. The headers are
// those both dialects need: the PostgREST clients (postgrest-js, supabase-js) send `Prefer`,
// `apikey`, `x-client-info`, the profiles and `Range`, and read `Content-Range` and `Location`.

import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { CorsConfig } from '../config.js';

const ALLOWED_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE';
const ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'X-Request-Id',
  'Prefer',
  'apikey',
  'x-client-info',
  'Accept-Profile',
  'Content-Profile',
  'Range',
  'X-Retry-Count',
].join(', ');
const EXPOSED_HEADERS = 'Content-Range, Location, X-Request-Id';
const PREFLIGHT_MAX_AGE_SECONDS = '600';

export function isAllowedOrigin(config: CorsConfig, origin: string | undefined): origin is string {
  if (!config.enabled || origin === undefined || origin === 'null') return false;
  return config.origins.includes(origin) || config.origins.includes('*');
}

export function corsMiddleware(config: CorsConfig): RequestHandler {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!config.enabled) {
      next();
      return;
    }
    const origin = req.headers.origin;
    res.vary('Origin');
    const allowed = isAllowedOrigin(config, origin);
    if (allowed) res.setHeader('Access-Control-Allow-Origin', origin);
    const preflight =
      req.method === 'OPTIONS' &&
      origin !== undefined &&
      req.headers['access-control-request-method'] !== undefined;
    if (!preflight) {
      if (allowed) res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS);
      next();
      return;
    }
    if (allowed) {
      res.setHeader('Access-Control-Allow-Methods', ALLOWED_METHODS);
      res.setHeader('Access-Control-Allow-Headers', ALLOWED_HEADERS);
      res.setHeader('Access-Control-Max-Age', PREFLIGHT_MAX_AGE_SECONDS);
    }
    res.status(204).end();
  };
}
