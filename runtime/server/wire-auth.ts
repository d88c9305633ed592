// How a server process authenticates and authorizes, from its config: auth disabled → anonymous
// and public (the auth tables' write rules still apply; a database where setup ran is refused
// unless auth was switched off explicitly); enabled → tokens, /auth/* routes, the policy cache
// and the portable enforcement path, or with -db.rls on PostgreSQL the native one.

import type { RequestHandler } from 'express';
import type { PolicySet } from '../../compiler/policy-set.js';
import { ANONYMOUS } from '../../compiler/types.js';
import { RestError, isRestError } from '../../errors/rest-error.js';
import { AUTH_USERS_TABLE, missingAuthParts } from '../auth/auth-ddl.js';
import { createPasswordHasher, type PasswordHasher } from '../auth/passwords.js';
import { createLoginRateLimiter } from '../auth/rate-limiter.js';
import { migrationUrlOf, setupAuth, upgradeAuthTables } from '../auth/setup.js';
import type { SessionClock } from '../auth/sessions.js';
import { createTokenService, withSessions } from '../auth/tokens.js';
import { createUserStates } from '../auth/user-states.js';
import { DEFAULT_REFRESH_TTL_SECONDS, sessionUrlOf, type Config } from '../config.js';
import type { DbAdapter } from '../db/adapter.js';
import { databaseChangeSource } from '../db/change-source.js';
import { adapterRunner, type RequestRunner } from '../enforce/request-runner.js';
import { authRoutes, tokenAuthenticate } from '../http/auth-routes.js';
import type { Authenticate } from '../http/rest-handler.js';
import type { Logger } from '../logger.js';
import { publicAuthorizer, type Authorizer } from '../enforce/authorizer.js';
import type { PolicyCache } from '../policies/policy-cache.js';
import type { SchemaCache } from '../db/schema-cache.js';
import {
  policyInvalidatingRunner,
  withAuthTableGuards,
  writeObservingRunner,
} from '../policies/auth-table-guards.js';
import { createDatabasePolicyCache } from '../policies/database-policy-cache.js';
import { createPortableAuthorizer } from '../enforce/portable-authorizer.js';
import type { NativeRls } from '../rls/native-rls.js';

export interface AuthWiringDeps {
  readonly config: Config;
  readonly adapter: DbAdapter;
  readonly schema: SchemaCache;
  readonly logger: Logger;
  /**
   * Dates sessions and judges their expiry (auth/sessions.ts, auth/user-states.ts; the tokens and
   * the login throttle keep Date.now): `Date.now` unless a test moves this server's session time
   * on to see a session expire without waiting for it.
   */
  readonly sessionClock?: SessionClock;
  /** Hashes and checks passwords (logins, registrations, setup, /auth_users): createPasswordHasher's unless given. */
  readonly hasher?: PasswordHasher;
}

export interface AuthWiring {
  readonly authenticate: Authenticate;
  readonly authorizer: Authorizer;
  readonly runner: RequestRunner;
  /** The /auth/* endpoints; undefined while auth is disabled. */
  readonly authRoutes: RequestHandler | undefined;
  /** The compiled policies; undefined while auth is disabled. */
  readonly policies: PolicyCache<PolicySet> | undefined;
  close(): Promise<void>;
}

/**
 * No secret (docs/operations.md "Fail closed"): a database where setup ran is served only when auth was
 * switched off explicitly, and then with a warning.
 */
async function checkAuthOff(config: Config, schema: SchemaCache, logger: Logger): Promise<void> {
  if (config.auth.disabledExplicitly === true) {
    logger.warn({ auth: 'off' }, 'auth is switched off (auth.enabled=false): every endpoint is public');
    return;
  }
  if ((await schema.get()).tables.has(AUTH_USERS_TABLE)) {
    throw new RestError(
      'auth_not_configured',
      `the database has ${AUTH_USERS_TABLE} (auth setup was run) but no auth.secret is configured: set one (-auth.secret or REST_AUTH_SECRET), or switch auth off explicitly with -auth.enabled=false`,
    );
  }
}

/** The NOTIFY channel of sql/004_sessions.sql: a user's row or sessions changed. */
export const USER_CHANNEL = 'rest_users';

/**
 * A database set up by an older version (it has `auth_users` but not `auth_login_throttle`, or
 * `auth_policies` without `columns`) gains what later versions added to the auth tables when a
 * server starts with auth enabled; rows are untouched. A login role that may not create tables
 * gets one line saying what to do.
 */
async function upgradeWhereSetUp(config: Config, adapter: DbAdapter, schema: SchemaCache): Promise<void> {
  const missing = missingAuthParts(await schema.get());
  if (missing.length === 0) return;
  try {
    await upgradeAuthTables(adapter, { dbUrl: migrationUrlOf(config) });
  } catch (e) {
    const why = isRestError(e) ? e.message : 'the database refused';
    throw new RestError(
      'upgrade_failed',
      `the database was set up by an older version of rest and lacks ${missing.join(', ')}, which could not be created (${why}); start rest once with a login role that may create tables`,
      { cause: e },
    );
  }
  await schema.refresh();
}

export async function wireAuth(deps: AuthWiringDeps): Promise<AuthWiring> {
  const { config, adapter, schema, logger } = deps;
  // LISTEN needs a session of its own; without one, changes are polled.
  const listenUrl = sessionUrlOf(config.db);
  const hasher = deps.hasher ?? createPasswordHasher();
  // Policy writes are rare: validate them against a fresh look at the schema.
  const currentSchema = () => schema.refresh();
  if (!config.auth.enabled || config.auth.secret === null) {
    await checkAuthOff(config, schema, logger);
    return {
      authenticate: () => ANONYMOUS,
      authorizer: withAuthTableGuards(publicAuthorizer, { schema: currentSchema, hasher, usersFloor: false }),
      runner: adapterRunner(adapter),
      authRoutes: undefined,
      policies: undefined,
      close: async () => {},
    };
  }
  await upgradeWhereSetUp(config, adapter, schema);
  const sessionClock = deps.sessionClock ?? { now: Date.now };
  const users = createUserStates({
    adapter,
    now: sessionClock.now,
    changes: databaseChangeSource({ adapter, url: listenUrl, logger }, USER_CHANNEL),
    logger,
  });
  const tokens = withSessions(
    createTokenService({ secret: config.auth.secret, ttlSeconds: config.auth.tokenTtlSeconds }),
    users,
  );
  const policies = createDatabasePolicyCache({ adapter, url: listenUrl, schema, logger });
  const authenticate = tokenAuthenticate(tokens);
  let native: NativeRls | undefined;
  if (config.db.rls && adapter.kind === 'postgres') {
    try {
      const { startNativeRls } = await import('../rls/native-rls.js');
      native = await startNativeRls({ adapter, url: listenUrl, policies, logger });
    } catch (e) {
      await policies.close();
      await users.close();
      throw e;
    }
  }
  const limiter = createLoginRateLimiter({ adapter, logger });
  return {
    authenticate,
    authorizer: withAuthTableGuards(native?.authorizer ?? createPortableAuthorizer({ policies }), {
      schema: currentSchema,
      hasher,
    }),
    // A write to auth_users may demote, rename or delete anyone: this process forgets every user.
    runner: writeObservingRunner(
      policyInvalidatingRunner(native?.runner ?? adapterRunner(adapter), () => policies.invalidate()),
      AUTH_USERS_TABLE,
      () => users.forgetAll(),
    ),
    authRoutes: authRoutes({
      adapter,
      tokens,
      limiter,
      trustProxy: config.http.trustProxy,
      hasher,
      refreshTtlSeconds: config.auth.refreshTtlSeconds ?? DEFAULT_REFRESH_TTL_SECONDS,
      sessionClock,
      userChanged: (userId) => users.forget(userId),
      authenticate,
      setup: () => setupAuth(adapter, { dbUrl: migrationUrlOf(config), hasher }),
      isSetUp: async () => (await schema.refresh()).tables.has(AUTH_USERS_TABLE),
      afterSetup: async () => {
        await schema.refresh();
        policies.invalidate();
        await native?.reconcile();
      },
    }),
    policies,
    close: async () => {
      native?.close();
      await limiter.close();
      await policies.close();
      await users.close();
    },
  };
}
