// The `auth_user` a `policy explain` decides for (docs/operations.md): anonymous, "some admin", a stored
// user of auth_users looked up by id or username — with the id, username and is_admin the server
// gives a built-in user's request, and the claims its token carries — or the caller of a token
// from another system, judged from its claims exactly as the server judges such a token.

import { ANONYMOUS, type AuthUser } from '../../compiler/types.js';
import { SqlBuilder, renderSql } from '../../compiler/sql/fragment.js';
import { quoteValue } from '../../errors/quote-value.js';
import { RestError } from '../../errors/rest-error.js';
import { AUTH_USERS_TABLE, USERNAME_KEY_COLUMN } from '../auth/auth-ddl.js';
import { usernameKey } from '../auth/usernames.js';
import { isTrue } from '../auth/sessions.js';
import { authUserFromClaims } from '../auth/tokens.js';
import type { DbAdapter, Row } from '../db/adapter.js';

export type ExplainUserSpec =
  | { readonly kind: 'anonymous' }
  /** An admin whose id does not matter: `auth_user.id` is null, `auth_user.is_admin` true. */
  | { readonly kind: 'some_admin'; readonly claims: Readonly<Record<string, unknown>> }
  /** The stored user with this id, or else with this username (compared as usernames are unique). */
  | { readonly kind: 'stored'; readonly ref: string; readonly claims: Readonly<Record<string, unknown>> }
  /** A token from another system with these claims (`user_id`, `is_admin`, `username`, the rest). */
  | { readonly kind: 'token'; readonly claims: Readonly<Record<string, unknown>> };

const INTEGER = /^-?[0-9]+$/;

async function findUser(
  db: Pick<DbAdapter, 'query' | 'dialect'>,
  column: 'id' | typeof USERNAME_KEY_COLUMN,
  value: unknown,
): Promise<Row | undefined> {
  const b = new SqlBuilder(db.dialect).append('SELECT ');
  (['id', 'username', 'is_admin'] as const).forEach((c, i) => b.append(i === 0 ? '' : ', ').appendIdent(c));
  b.append(' FROM ').appendIdent(AUTH_USERS_TABLE).append(' WHERE ').appendIdent(column).append(' = ');
  b.appendValue(value);
  const { rows } = await db.query(renderSql(db.dialect, b.build()));
  return rows[0];
}

/** A stored user by id (an integer that is one) or else by username; unknown → exit 2 naming it. */
async function storedUser(db: Pick<DbAdapter, 'query' | 'dialect'>, ref: string): Promise<Row> {
  const id = INTEGER.test(ref) ? Number(ref) : undefined;
  const row =
    (id !== undefined && Number.isSafeInteger(id) ? await findUser(db, 'id', id) : undefined) ??
    (await findUser(db, USERNAME_KEY_COLUMN, usernameKey(ref)));
  if (row === undefined) {
    throw new RestError(
      'unknown_user',
      `user ${quoteValue(ref)} does not exist: no user of auth_users has this id or username`,
    );
  }
  return row;
}

/**
 * The caller of a token from another system with `claims`, as authUserFromClaims makes it for a
 * request; claims such a token is refused for (no integer `user_id`) are an invalid argument.
 */
function tokenUser(claims: Readonly<Record<string, unknown>>): AuthUser {
  try {
    return authUserFromClaims(claims);
  } catch (e) {
    if (!(e instanceof RestError)) throw e;
    const detail = e.cause instanceof Error ? e.cause.message : e.message;
    throw new RestError(
      'invalid_arguments',
      `--claims ${quoteValue(JSON.stringify(claims))} would be refused as a token (${detail}): give an integer user_id, or --user <id|username> or --admin`,
    );
  }
}

/** The user of `spec`; a stored user's token claims win over the extra claims given. */
export async function explainUser(
  db: Pick<DbAdapter, 'query' | 'dialect'>,
  spec: ExplainUserSpec,
): Promise<AuthUser> {
  switch (spec.kind) {
    case 'anonymous':
      return ANONYMOUS;
    case 'some_admin':
      return Object.freeze({
        id: null,
        username: null,
        is_admin: true,
        is_authenticated: true,
        claims: Object.freeze({ ...spec.claims, is_admin: true }),
      });
    case 'stored': {
      const row = await storedUser(db, spec.ref);
      const id = Number(row['id']);
      const username = String(row['username']);
      const is_admin = isTrue(row['is_admin']);
      return Object.freeze({
        id,
        username,
        is_admin,
        is_authenticated: true,
        claims: Object.freeze({ ...spec.claims, user_id: id, is_admin, username }),
      });
    }
    case 'token':
      return tokenUser(spec.claims);
  }
}
