// Whom the console decides for (docs/console.md): a caller as the page sends it, read into the
// ExplainUserSpec of `policy explain` (runtime/explain/explain-user.ts), which loads a stored user.

import { RestError } from '../../errors/rest-error.js';
import type { ExplainUserSpec } from '../explain/explain-user.js';

const isObject = (v: unknown): v is Readonly<Record<string, unknown>> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const invalid = (message: string): RestError =>
  new RestError('invalid_body', message, { details: { field: 'caller' } });

/**
 * `{"kind":"anonymous"}`, `{"kind":"admin"}`, `{"kind":"user","ref":"<id or username>"}` or
 * `{"kind":"claims","claims":{…}}` (a token from another system).
 */
export function callerSpec(value: unknown): ExplainUserSpec {
  if (!isObject(value)) throw invalid('"caller" is required: an object with "kind"');
  switch (value['kind']) {
    case 'anonymous':
      return { kind: 'anonymous' };
    case 'admin':
      return { kind: 'some_admin', claims: {} };
    case 'user': {
      const ref = value['ref'];
      if (typeof ref !== 'string' || ref.trim() === '') {
        throw invalid('a "user" caller needs "ref": the id or username of a stored user');
      }
      return { kind: 'stored', ref: ref.trim(), claims: {} };
    }
    case 'claims': {
      const claims = value['claims'];
      if (!isObject(claims)) throw invalid('a "claims" caller needs "claims": a JSON object');
      return { kind: 'token', claims };
    }
    default:
      throw invalid('"caller.kind" must be anonymous, admin, user or claims');
  }
}
