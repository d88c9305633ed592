// Writes to the auth tables through the table endpoints, whatever authorizer decides them:
// `/auth_users` under the floor (runtime/enforce/auth-users-floor.ts), usernames validated (with
// their case-insensitive key) and passwords validated and hashed; `/auth_policies` rows validated exactly like `auth policy add` (docs/policy-language.md).

import { RestError } from '../../errors/rest-error.js';
import { AUTH_POLICIES_TABLE, AUTH_USERS_TABLE, USERNAME_KEY_COLUMN } from '../auth/auth-ddl.js';
import { createPasswordHasher, type PasswordHasher } from '../auth/passwords.js';
import { normalizeUsername } from '../auth/usernames.js';
import { userColumns } from '../auth/users.js';
import type { SchemaSnapshot } from '../db/adapter.js';
import type { Authorization, Authorizer, WriteGuard, WriteRow } from '../enforce/authorizer.js';
import type { RequestRunner } from '../enforce/request-runner.js';
import { usersFloor } from '../enforce/auth-users-floor.js';
import { composeGuards } from '../enforce/write-guards.js';
import { COLUMNS_FIELD, policiesIn, storedColumnsValue, validatePolicy } from './policy-service.js';

export interface AuthTableGuardDeps {
  /** The current schema: policies are validated against its tables and columns. */
  readonly schema: () => Promise<SchemaSnapshot>;
  readonly hasher?: PasswordHasher;
  /**
   * The floor on auth_users (docs/authentication.md): non-admins never write id, password or is_admin. Default
   * on; off only while auth is disabled (every endpoint is public and there are no admins).
   */
  readonly usersFloor?: boolean;
}

const hiddenColumn = (): RestError =>
  new RestError(
    'unknown_column',
    `table ${AUTH_USERS_TABLE} has no column ${USERNAME_KEY_COLUMN} (in body)`,
    {
      details: { column: USERNAME_KEY_COLUMN, in: 'body' },
    },
  );

function usersGuard(hasher: PasswordHasher): WriteGuard {
  return {
    async prepareCreate(rows) {
      return Promise.all(
        rows.map(async (row): Promise<WriteRow> => {
          if (Object.hasOwn(row, USERNAME_KEY_COLUMN)) throw hiddenColumn();
          const isAdmin = row['is_admin'];
          const columns = await userColumns(
            {
              username: row['username'] as string,
              password: row['password'] as string,
              ...(isAdmin === undefined ? {} : { is_admin: isAdmin as boolean }),
            },
            { hasher },
          );
          return { ...row, ...columns };
        }),
      );
    },
    async preparePatch(patch) {
      if (Object.hasOwn(patch, USERNAME_KEY_COLUMN)) throw hiddenColumn();
      const out: Record<string, unknown> = { ...patch };
      if (Object.hasOwn(patch, 'username')) {
        const { username, key } = normalizeUsername(patch['username']);
        out['username'] = username;
        out[USERNAME_KEY_COLUMN] = key;
      }
      if (Object.hasOwn(patch, 'password'))
        out['password'] = await hasher.hashPassword(patch['password'] as string);
      return out;
    },
  };
}

/** A written policy row with its `columns` in stored form (NULL for every column). */
const withStoredColumns = (row: WriteRow): WriteRow =>
  Object.hasOwn(row, COLUMNS_FIELD)
    ? { ...row, [COLUMNS_FIELD]: storedColumnsValue(row[COLUMNS_FIELD]) }
    : row;

function policiesGuard(schema: SchemaSnapshot): WriteGuard {
  return {
    async prepareCreate(rows) {
      for (const row of rows) validatePolicy(row, schema);
      return rows.map(withStoredColumns);
    },
    async preparePatch(patch) {
      return withStoredColumns(patch);
    },
    // The rows as stored, against every other row the transaction sees (the request's own
    // included): a cycle closed by this write, or among the rows of one POST, is refused.
    async checkStoredRows(rows, tx) {
      const stored = await policiesIn(tx);
      for (const row of rows) {
        const id = Number(row['id']);
        validatePolicy(
          row,
          schema,
          stored.filter((r) => r.id !== id),
        );
      }
    },
  };
}

/** Adds the auth tables' write rules to every granted write of `inner`. */
export function withAuthTableGuards(inner: Authorizer, deps: AuthTableGuardDeps): Authorizer {
  const users = usersGuard(deps.hasher ?? createPasswordHasher());
  return {
    async authorize(request): Promise<Authorization> {
      const authorization = await inner.authorize(request);
      if (authorization.kind === 'deny' || (request.action !== 'create' && request.action !== 'update'))
        return authorization;
      switch (request.table.name) {
        case AUTH_USERS_TABLE: {
          const guard = composeGuards(authorization.guard, users);
          // The floor judges the body as sent, before any preset fills a column or a password is hashed.
          const floor = deps.usersFloor === false ? undefined : usersFloor(request.user);
          return { ...authorization, guard: floor === undefined ? guard : composeGuards(floor, guard) };
        }
        case AUTH_POLICIES_TABLE:
          // Read here, before the write's transaction: on SQLite the schema cannot be read
          // while that transaction holds the connection.
          return {
            ...authorization,
            guard: composeGuards(authorization.guard, policiesGuard(await deps.schema())),
          };
        default:
          return authorization;
      }
    },
  };
}

/**
 * Tells `onPoliciesWritten` after every committed write to `auth_policies`, so the next request
 * sees it (docs/http-api.md); other processes hear of it through the policy cache's change source.
 */
export const policyInvalidatingRunner = (
  inner: RequestRunner,
  onPoliciesWritten: () => void,
): RequestRunner => writeObservingRunner(inner, AUTH_POLICIES_TABLE, onPoliciesWritten);

/**
 * Tells `onWritten` after every write to `table` through the table endpoints (whether it
 * committed or not: the caller only drops a cache).
 */
export function writeObservingRunner(
  inner: RequestRunner,
  table: string,
  onWritten: () => void,
): RequestRunner {
  const switchAction = inner.switchAction?.bind(inner);
  return {
    ...(switchAction === undefined ? {} : { switchAction }),
    async run(context, mode, fn) {
      if (context.table !== table || context.action === 'read' || context.action === 'read_mine') {
        return inner.run(context, mode, fn);
      }
      try {
        return await inner.run(context, mode, fn);
      } finally {
        onWritten();
      }
    },
  };
}
