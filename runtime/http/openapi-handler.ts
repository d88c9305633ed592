// `GET /openapi.json`, and `GET /rest/v1/` when it asks for OpenAPI (no `Accept`, or one that
// takes `application/openapi+json`, `application/json` or `*/*`): the caller's OpenAPI document
// (runtime/openapi/). Every other request goes on to the next handler.

import type { Request, RequestHandler, Response } from 'express';
import type { OpenApiService } from '../openapi/openapi-service.js';
import type { Authenticate } from './rest-handler.js';
import { JSON_CONTENT_TYPE } from './send-json.js';

export const OPENAPI_PATH = '/openapi.json';
export const PGRST_ROOT = '/rest/v1/';
const OPENAPI_CONTENT_TYPE = 'application/openapi+json; charset=utf-8';
const OPENAPI_MEDIA = 'application/openapi+json';
/** Ranges answered with `application/openapi+json` (PostgREST's root does the same). */
const TAKES_OPENAPI = new Set([OPENAPI_MEDIA, 'application/*', '*/*']);

export interface OpenApiHandlerDeps {
  readonly openapi: OpenApiService;
  readonly authenticate: Authenticate;
}

/** The media ranges of an `Accept` header, without their parameters, lower-cased. */
function mediaRanges(accept: string): string[] {
  return accept.split(',').map((range) => (range.split(';')[0] ?? '').trim().toLowerCase());
}

/** The content type to answer `/rest/v1/` with, or undefined when the request asks for something else. */
function pgrstRootType(accept: string | undefined): string | undefined {
  if (accept === undefined || accept.trim() === '') return OPENAPI_CONTENT_TYPE;
  const ranges = mediaRanges(accept);
  if (ranges.some((r) => TAKES_OPENAPI.has(r))) return OPENAPI_CONTENT_TYPE;
  return ranges.includes('application/json') ? JSON_CONTENT_TYPE : undefined;
}

/** The content type to answer with, or undefined when the request is not for the document. */
function documentType(req: Request): string | undefined {
  if (req.method !== 'GET' && req.method !== 'HEAD') return undefined;
  const q = req.url.indexOf('?');
  const path = q === -1 ? req.url : req.url.slice(0, q);
  if (path === OPENAPI_PATH) return JSON_CONTENT_TYPE;
  return path === PGRST_ROOT ? pgrstRootType(req.headers.accept) : undefined;
}

async function sendDocument(
  deps: OpenApiHandlerDeps,
  req: Request,
  res: Response,
  type: string,
): Promise<void> {
  const text = await deps.openapi.documentFor(await deps.authenticate(req));
  res.statusCode = 200;
  res.setHeader('Content-Type', type);
  res.setHeader('Content-Length', Buffer.byteLength(text));
  // One document per caller: a shared cache must not hand one caller's to another.
  for (const header of ['Accept', 'Authorization', 'apikey']) res.vary(header);
  res.setHeader('Cache-Control', 'private, no-cache');
  res.end(text);
}

// Synchronous for every other request: the table endpoints pay no promise for passing through.
export function openApiHandler(deps: OpenApiHandlerDeps): RequestHandler {
  return (req: Request, res: Response, next): Promise<void> | undefined => {
    const type = documentType(req);
    if (type !== undefined) return sendDocument(deps, req, res, type);
    next();
    return undefined;
  };
}
