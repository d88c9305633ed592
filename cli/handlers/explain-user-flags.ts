// The flags of `policy explain` that say whom it decides for (cli/commands/explain-user.ts), read
// into the runtime's ExplainUserSpec (runtime/explain/explain-user.ts, which loads a stored user
// from auth_users).

import { quoteValue } from '../../errors/quote-value.js';
import { RestError } from '../../errors/rest-error.js';
import type { ExplainUserSpec } from '../../runtime/explain/explain-user.js';

export interface ExplainUserFlags {
  readonly user?: string | undefined;
  readonly admin: boolean;
  readonly anonymous: boolean;
  readonly claims?: string | undefined;
}

const usage = (message: string): RestError => new RestError('invalid_arguments', message);

function parseClaims(text: string): Readonly<Record<string, unknown>> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw usage(`--claims ${quoteValue(text)} is not a JSON object such as '{"org_id": 7}'`);
  }
  return value as Readonly<Record<string, unknown>>;
}

/**
 * Anonymous unless --user, --admin or --claims is given; --user, --admin and --anonymous exclude
 * each other. --claims alone is the caller of a token from another system, judged from its claims.
 */
export function explainUserSpec(flags: ExplainUserFlags): ExplainUserSpec {
  const given = [
    flags.user === undefined ? undefined : '--user',
    flags.admin ? '--admin' : undefined,
    flags.anonymous ? '--anonymous' : undefined,
  ].filter((f) => f !== undefined);
  if (given.length > 1) {
    throw usage(
      `${given.join(' and ')} exclude each other: --user loads a stored user (with its is_admin), --admin means some admin`,
    );
  }
  const claims = flags.claims === undefined ? {} : parseClaims(flags.claims);
  if (flags.user !== undefined) return { kind: 'stored', ref: flags.user, claims };
  if (flags.admin) return { kind: 'some_admin', claims };
  if (flags.claims !== undefined) {
    if (flags.anonymous) {
      throw usage('--anonymous and --claims exclude each other: --claims describes the caller of a token');
    }
    return { kind: 'token', claims };
  }
  return { kind: 'anonymous' };
}
