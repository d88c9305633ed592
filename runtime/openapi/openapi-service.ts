// The OpenAPI document per caller, built from the schema snapshot and the compiled policies the
// requests use, so it follows a policy or schema change as soon as they do (within 2 s). Built
// once per (snapshot, caller's view) and kept as JSON text: callers with the same decisions share it.

import { createHash } from 'node:crypto';
import type { AuthUser } from '../../compiler/types.js';
import type { SchemaSnapshot } from '../db/adapter.js';
import type { PolicySource } from '../enforce/authorizer.js';
import { callerView, viewKey } from './caller-view.js';
import { openApiDocument } from './openapi-document.js';

/** Distinct views kept per snapshot; the oldest is dropped past it. */
export const VIEWS_PER_SNAPSHOT = 64;
const VERSION_HEX_DIGITS = 16;

export interface OpenApiServiceDeps {
  readonly schema: { get(): Promise<SchemaSnapshot> };
  /** The policy cache; undefined while auth is disabled (every table public). */
  readonly policies: PolicySource | undefined;
}

export interface OpenApiService {
  /** The document of the API as `user` may use it, as JSON text. */
  documentFor(user: AuthUser): Promise<string>;
}

/** The document as text; `info.version` is a digest of the rest, so it changes exactly when the API does. */
function render(view: Parameters<typeof openApiDocument>[0]): string {
  const draft = openApiDocument(view, '');
  const digest = createHash('sha256')
    .update(JSON.stringify([draft.paths, draft.components]))
    .digest('hex')
    .slice(0, VERSION_HEX_DIGITS);
  return JSON.stringify({ ...draft, info: { ...draft.info, version: digest } });
}

export function createOpenApiService(deps: OpenApiServiceDeps): OpenApiService {
  const built = new WeakMap<SchemaSnapshot, Map<string, string>>();
  return {
    async documentFor(user) {
      const snapshot = await deps.schema.get();
      const policies = deps.policies === undefined ? undefined : (await deps.policies.get()).compiled;
      const view = await callerView({ snapshot, user, policies });
      const key = viewKey(view);
      let documents = built.get(snapshot);
      if (documents === undefined) {
        documents = new Map();
        built.set(snapshot, documents);
      }
      const hit = documents.get(key);
      if (hit !== undefined) return hit;
      const text = render(view);
      if (documents.size >= VIEWS_PER_SNAPSHOT) {
        const oldest = documents.keys().next();
        if (oldest.done !== true) documents.delete(oldest.value);
      }
      documents.set(key, text);
      return text;
    },
  };
}
