// The `auth_user` a `policy explain` decides for, from the flags --user/--admin/--anonymous/
// --username/--claims (declared here too): the same shape the token service derives from a
// verified token (SPEC §3.1).

import type { Options } from 'yargs';
import { ANONYMOUS, type AuthUser } from '../../compiler/types.js';
import { RestError } from '../../errors/rest-error.js';

/** The flags that describe the user, as yargs options. */
export const EXPLAIN_USER_OPTIONS = {
  user: { type: 'string', describe: 'Decide for the logged-in user with this id (auth_user.id)' },
  admin: { type: 'boolean', default: false, describe: 'The user is an admin (auth_user.is_admin)' },
  anonymous: { type: 'boolean', default: false, describe: 'Decide for an anonymous request (the default)' },
  username: { type: 'string', describe: "The user's auth_user.username" },
  claims: { type: 'string', describe: 'More token claims as a JSON object (auth_user.claims.<name>)' },
} as const satisfies Readonly<Record<string, Options>>;

export interface ExplainUserFlags {
  readonly user?: string | undefined;
  readonly admin: boolean;
  readonly anonymous: boolean;
  readonly username?: string | undefined;
  readonly claims?: string | undefined;
}

const usage = (message: string): RestError => new RestError('usage', 'invalid_arguments', message);

function parseClaims(text: string): Readonly<Record<string, unknown>> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw usage('--claims must be a JSON object, e.g. \'{"org_id": 7}\'');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw usage('--claims must be a JSON object, e.g. \'{"org_id": 7}\'');
  }
  return value as Readonly<Record<string, unknown>>;
}

/** Anonymous unless --user is given; --admin, --username and --claims need --user. */
export function explainUser(flags: ExplainUserFlags): AuthUser {
  if (flags.user === undefined) {
    if (flags.admin || flags.username !== undefined || flags.claims !== undefined) {
      throw usage('--admin, --username and --claims describe a logged-in user: give --user <id> too');
    }
    return ANONYMOUS;
  }
  if (flags.anonymous) throw usage('--anonymous and --user exclude each other');
  if (!/^-?[0-9]+$/.test(flags.user) || !Number.isSafeInteger(Number(flags.user))) {
    throw usage(`--user must be an integer user id (got '${flags.user}')`);
  }
  const id = Number(flags.user);
  const extra = flags.claims === undefined ? {} : parseClaims(flags.claims);
  // A token's own claims win over --claims for the attributes auth_user reads from it.
  const claims = Object.freeze({
    ...extra,
    user_id: id,
    is_admin: flags.admin,
    ...(flags.username === undefined ? {} : { username: flags.username }),
  });
  return Object.freeze({
    id,
    username: flags.username ?? null,
    is_admin: flags.admin,
    is_authenticated: true,
    claims,
  });
}
