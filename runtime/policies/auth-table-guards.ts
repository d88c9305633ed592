// Writes to the auth tables through the table endpoints, whatever authorizer decides them:
// `/auth_users` usernames validated (with their case-insensitive key) and passwords validated and
// hashed; `/auth_policies` rows validated exactly like `auth policy add` (SPEC §4.5).

import { RestError } from '../../errors/rest-error.js';
import { AUTH_POLICIES_TABLE, AUTH_USERS_TABLE, USERNAME_KEY_COLUMN } from '../auth/auth-ddl.js';
import { createPasswordHasher, type PasswordHasher } from '../auth/passwords.js';
import { normalizeUsername } from '../auth/usernames.js';
import { userColumns } from '../auth/users.js';
import type { DbSession, Row, SchemaSnapshot } from '../db/adapter.js';
import type { Authorization, Authorizer, CreatedRow, WriteGuard, WriteRow } from '../plan/authorizer.js';
import type { RequestRunner } from '../handlers/request-runner.js';
import { validatePolicy } from './policy-service.js';

export interface AuthTableGuardDeps {
  /** The current schema: policies are validated against its tables and columns. */
  readonly schema: () => Promise<SchemaSnapshot>;
  readonly hasher?: PasswordHasher;
}

/** Runs `first`, then `second`, for each hook either of them has. */
export function composeGuards(first: WriteGuard | undefined, second: WriteGuard): WriteGuard {
  if (first === undefined) return second;
  const guard: {
    -readonly [K in keyof WriteGuard]: WriteGuard[K];
  } = {};
  if (first.prepareCreate !== undefined || second.prepareCreate !== undefined) {
    guard.prepareCreate = async (rows: readonly WriteRow[], tx: DbSession) => {
      const once = first.prepareCreate === undefined ? rows : await first.prepareCreate(rows, tx);
      return second.prepareCreate === undefined ? once : second.prepareCreate(once, tx);
    };
  }
  if (first.preparePatch !== undefined || second.preparePatch !== undefined) {
    guard.preparePatch = async (patch: WriteRow, tx: DbSession) => {
      const once = first.preparePatch === undefined ? patch : await first.preparePatch(patch, tx);
      return second.preparePatch === undefined ? once : second.preparePatch(once, tx);
    };
  }
  if (first.checkCreatedRow !== undefined || second.checkCreatedRow !== undefined) {
    guard.checkCreatedRow = async (created: CreatedRow, tx: DbSession) => {
      await first.checkCreatedRow?.(created, tx);
      await second.checkCreatedRow?.(created, tx);
    };
  }
  if (first.checkUpdatedRows !== undefined || second.checkUpdatedRows !== undefined) {
    guard.checkUpdatedRows = async (rows: readonly Row[], tx: DbSession) => {
      await first.checkUpdatedRows?.(rows, tx);
      await second.checkUpdatedRows?.(rows, tx);
    };
  }
  return guard;
}

const hiddenColumn = (): RestError =>
  new RestError(
    'invalid_input',
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

function policiesGuard(schema: SchemaSnapshot): WriteGuard {
  return {
    async prepareCreate(rows) {
      for (const row of rows) validatePolicy(row, schema);
      return rows;
    },
    async checkUpdatedRows(rows) {
      for (const row of rows) validatePolicy(row, schema);
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
      let extra: WriteGuard;
      switch (request.table.name) {
        case AUTH_USERS_TABLE:
          extra = users;
          break;
        case AUTH_POLICIES_TABLE:
          // Read here, before the write's transaction: on SQLite the schema cannot be read
          // while that transaction holds the connection.
          extra = policiesGuard(await deps.schema());
          break;
        default:
          return authorization;
      }
      return { ...authorization, guard: composeGuards(authorization.guard, extra) };
    },
  };
}

/**
 * Tells `onPoliciesWritten` after every committed write to `auth_policies`, so the next request
 * sees it (SPEC §3.2); other processes hear of it through the policy cache's change source.
 */
export function policyInvalidatingRunner(inner: RequestRunner, onPoliciesWritten: () => void): RequestRunner {
  return {
    async run(context, mode, fn) {
      if (
        context.table !== AUTH_POLICIES_TABLE ||
        context.action === 'read' ||
        context.action === 'read_mine'
      ) {
        return inner.run(context, mode, fn);
      }
      try {
        return await inner.run(context, mode, fn);
      } finally {
        onPoliciesWritten();
      }
    },
  };
}
