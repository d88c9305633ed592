// Reading OpenAPI documents in the HTTP tests: fetch one, validate it with a maintained validator
// of the OpenAPI 3.1 schema (every $ref resolved too), and look at its paths and schemas.

import { Validator } from '@seriousme/openapi-schema-validator';
import { expect } from 'vitest';
import type { Client, Reply } from '../../support/http.js';

export interface OpenApiDoc {
  readonly openapi: string;
  readonly info: { readonly version: string };
  readonly paths: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  readonly components: {
    readonly parameters: Readonly<Record<string, { readonly name: string; readonly in: string }>>;
    readonly schemas: Readonly<
      Record<string, { readonly properties?: Record<string, unknown>; readonly required?: string[] }>
    >;
    readonly securitySchemes?: Readonly<Record<string, unknown>>;
  };
  readonly security?: unknown;
}

/** Fails unless `doc` validates against the OpenAPI schema of its version and its refs resolve. */
export async function expectValidOpenApi(doc: unknown): Promise<void> {
  const validator = new Validator();
  const result = await validator.validate(structuredClone(doc) as Record<string, unknown>);
  expect(result.errors, JSON.stringify(result.errors, null, 1)?.slice(0, 2000)).toBeUndefined();
  expect(result.valid).toBe(true);
  expect(validator.version).toBe('3.1');
  expect(() => validator.resolveRefs()).not.toThrow();
}

export async function fetchOpenApi(
  http: Client,
  headers: Readonly<Record<string, string>> = {},
  path = '/openapi.json',
): Promise<{ readonly reply: Reply; readonly doc: OpenApiDoc }> {
  const reply = await http.get(path, { headers });
  expect(reply.status, reply.text.slice(0, 500)).toBe(200);
  return { reply, doc: reply.json as OpenApiDoc };
}

/** `{ path: [methods] }` of the table paths (the fixed ones left out), methods sorted. */
export function tableOperations(doc: OpenApiDoc): Record<string, string[]> {
  const fixed = (p: string): boolean =>
    p === '/' || p === '/openapi.json' || p === '/rest/v1/' || p.startsWith('/auth/');
  return Object.fromEntries(
    Object.entries(doc.paths)
      .filter(([p]) => !fixed(p))
      .map(([p, item]) => [
        p,
        Object.keys(item)
          .filter((k) => k !== 'parameters')
          .sort(),
      ]),
  );
}

/** Every place a key named `name` occurs in `value`, as dotted paths. */
export function keyPaths(value: unknown, name: string, at = ''): string[] {
  if (typeof value !== 'object' || value === null) return [];
  const found: string[] = [];
  for (const [k, v] of Object.entries(value)) {
    const here = `${at}/${k}`;
    if (k === name || (k === 'name' && v === name)) found.push(here);
    found.push(...keyPaths(v, name, here));
  }
  return found;
}

/** `in:name` of each parameter of an operation, references to components.parameters resolved. */
export function parameterNames(doc: OpenApiDoc, path: string, method: string): string[] {
  const operation = doc.paths[path]?.[method] as {
    parameters?: Array<{ $ref?: string; name?: string; in?: string }>;
  };
  return (operation.parameters ?? []).map((p) => {
    const resolved =
      p.$ref === undefined ? p : doc.components.parameters[p.$ref.replace('#/components/parameters/', '')];
    return `${resolved?.in ?? '?'}:${resolved?.name ?? '?'}`;
  });
}
