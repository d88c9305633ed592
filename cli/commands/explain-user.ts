// The flags of `policy explain` that say whom it decides for — --user <id|username>, --admin,
// --anonymous, --claims — as yargs options; cli/handlers/explain-user-flags.ts reads them.

import type { Options } from 'yargs';

/** The flags that describe the user, as yargs options. */
export const EXPLAIN_USER_OPTIONS = {
  user: {
    type: 'string',
    describe: 'Decide for this stored user of auth_users, by id or username (its is_admin and username)',
  },
  admin: {
    type: 'boolean',
    default: false,
    describe: 'Decide for some admin (auth_user.is_admin true, no particular id)',
  },
  anonymous: { type: 'boolean', default: false, describe: 'Decide for an anonymous request (the default)' },
  claims: {
    type: 'string',
    describe:
      'Token claims as a JSON object (auth_user.claims.<name>); alone: the caller of a token from another system',
  },
} as const satisfies Readonly<Record<string, Options>>;
