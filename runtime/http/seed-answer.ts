// The seed dialect's answers (docs/http-api.md): a table request's outcome → status and JSON body.

import type { HandlerResult } from '../handlers/health-handler.js';
import type { Outcome } from '../handlers/table-handler.js';

export function seedAnswer(outcome: Outcome): HandlerResult {
  switch (outcome.kind) {
    case 'rows':
      return { status: 200, body: outcome.rows };
    case 'row':
      return { status: 200, body: outcome.row };
    case 'count':
      return { status: 200, body: { count: outcome.count } };
    case 'created':
      return { status: 201, body: outcome.many ? outcome.rows : outcome.rows[0] };
    case 'updated':
      return { status: 200, body: { updated: outcome.count } };
    case 'deleted':
      return { status: 200, body: { deleted: outcome.count } };
  }
}
