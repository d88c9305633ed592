// Headers of every response: JSON content type, nosniff, and the request id (X-Request-Id).

import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { JSON_CONTENT_TYPE } from './send-json.js';

const CLIENT_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The client's X-Request-Id when it is a sane token, else a new one. */
export function requestIdOf(req: Request): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && CLIENT_ID.test(given) ? given : randomUUID();
}

export function commonHeaders(req: Request, res: Response, next: NextFunction): void {
  const id = requestIdOf(req);
  res.locals['requestId'] = id;
  res.setHeader('Content-Type', JSON_CONTENT_TYPE);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('X-Request-Id', id);
  next();
}

export const requestIdFrom = (res: Response): string => String(res.locals['requestId'] ?? '');
