// Method + path → which endpoint is asked for (health, a table, a row by key); 404/405 here.

import { RestError } from '../../errors/rest-error.js';

export type Operation = 'read' | 'create' | 'update' | 'delete';

export type Route =
  | { readonly kind: 'health' }
  | {
      readonly kind: 'table';
      readonly table: string;
      readonly key: string | undefined;
      readonly operation: Operation;
    };

const HEALTH_METHODS = ['GET', 'HEAD'] as const;
const COLLECTION_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
const ITEM_METHODS = ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE'] as const;

const operationOf: Readonly<Record<string, Operation>> = {
  GET: 'read',
  HEAD: 'read',
  POST: 'create',
  PUT: 'update',
  PATCH: 'update',
  DELETE: 'delete',
};

function methodNotAllowed(method: string, allowed: readonly string[]): RestError {
  return new RestError('method_not_allowed', `method ${method} is not allowed here`, {
    details: { allowed },
    headers: { Allow: allowed.join(', ') },
  });
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new RestError('invalid_path', 'the path is not valid percent-encoding');
  }
}

/** `rawPath` is the request's pathname, still percent-encoded, without the query string. */
export function parseRoute(method: string, rawPath: string): Route {
  const segments = rawPath === '/' ? [] : rawPath.slice(1).split('/');
  // One trailing slash is ignored: `/items/` is `/items`.
  if (segments.length > 1 && segments[segments.length - 1] === '') segments.pop();
  if (segments.length > 2 || segments.some((s) => s === '')) {
    throw new RestError('not_found', 'no such endpoint');
  }
  const [table, key] = segments;
  if (table === undefined) {
    if (!(HEALTH_METHODS as readonly string[]).includes(method))
      throw methodNotAllowed(method, HEALTH_METHODS);
    return { kind: 'health' };
  }
  const allowed: readonly string[] = key === undefined ? COLLECTION_METHODS : ITEM_METHODS;
  const operation = operationOf[method];
  if (operation === undefined || !allowed.includes(method)) throw methodNotAllowed(method, allowed);
  return {
    kind: 'table',
    table: decodeSegment(table),
    key: key === undefined ? undefined : decodeSegment(key),
    operation,
  };
}
