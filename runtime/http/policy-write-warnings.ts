// The escalation warnings of `/auth_policies` writes (docs/policy-language.md): every escalation
// present after a successful write is in its answer — `POST`: each returned policy row carries a
// `warnings` array (`[]` when none); `PUT`/`PATCH`/`DELETE`: a `warnings` array beside
// `updated`/`deleted`. The table endpoints answer every table alike (rest-handler.ts); this
// handler, placed before them, adds the warnings to the JSON answer of such a write once it has
// committed, read from the stored rows with one more query. Other requests pass untouched.

import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { DbAdapter } from '../db/adapter.js';
import type { Logger } from '../logger.js';
import { AUTH_POLICIES_TABLE } from '../auth/auth-ddl.js';
import { storedEscalations, type PolicyEscalation } from '../policies/policy-service.js';
import type { SchemaLookup } from './rest-handler.js';

export interface PolicyWriteWarningsDeps {
  readonly adapter: DbAdapter;
  readonly schema: SchemaLookup;
  readonly logger: Logger;
}

const WRITE_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

const firstSegment = (url: string): string | undefined => {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const segment = /^\/([^/]+)(?:\/[^/]+)?\/?$/.exec(path)?.[1];
  if (segment === undefined) return undefined;
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
};

/** Whether `req` writes `/auth_policies` or one of its rows through the table endpoints. */
export const isPolicyWrite = (req: Pick<Request, 'method' | 'url'>): boolean =>
  WRITE_METHODS.has(req.method) && firstSegment(req.url) === AUTH_POLICIES_TABLE;

/** `body` (a write's answer) with the warnings added where the API says; other shapes as they are. */
export function withWarnings(body: unknown, warnings: readonly PolicyEscalation[]): unknown {
  const isObject = (v: unknown): v is Record<string, unknown> =>
    typeof v === 'object' && v !== null && !Array.isArray(v);
  if (Array.isArray(body)) return body.map((row) => (isObject(row) ? { ...row, warnings } : row));
  return isObject(body) ? { ...body, warnings } : body;
}

export function policyWriteWarnings(deps: PolicyWriteWarningsDeps): RequestHandler {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!isPolicyWrite(req)) {
      next();
      return;
    }
    const end = res.end.bind(res) as (chunk?: unknown) => Response;
    // Every JSON answer is one `end(text)` call (send-json.ts); a failed write keeps its answer.
    res.end = ((chunk?: unknown): Response => {
      res.end = end as Response['end'];
      if (res.statusCode < 200 || res.statusCode >= 300 || typeof chunk !== 'string') return end(chunk);
      const send = (text: string): void => {
        res.setHeader('Content-Length', Buffer.byteLength(text));
        end(text);
      };
      deps.schema
        .get()
        .then((schema) => storedEscalations(deps.adapter, schema))
        .then(
          (warnings) => send(JSON.stringify(withWarnings(JSON.parse(chunk) as unknown, warnings))),
          (error: unknown) => {
            // The write has committed: its answer goes out, without the warnings it could not read.
            deps.logger.error({ err: error }, 'the escalation warnings of a policy write could not be read');
            send(chunk);
          },
        );
      return res;
    }) as Response['end'];
    next();
  };
}
