// The `/auth/*` namespace of docs/authentication.md. Auth enabled: setup, register, login, logout, refresh,
// password, sessions/revoke (other methods → 405), any other `/auth/<x>` → 404 `not_found`. Auth disabled: every `/auth/*` → 404
// `auth_disabled`. Paths outside the namespace fall through to the table endpoints.

import type { Request, RequestHandler, Response } from 'express';
import type { AuthUser } from '../../compiler/types.js';
import { RestError, isRestError } from '../../errors/rest-error.js';
import type { DbAdapter } from '../db/adapter.js';
import type { PasswordHasher } from '../auth/passwords.js';
import type { LoginRateLimiter } from '../auth/rate-limiter.js';
import { changeOwnPassword, parsePasswordChange } from '../auth/password-change.js';
import {
  openSession,
  revokeByRefreshToken,
  revokeUserSessions,
  rotateRefreshToken,
  type SessionClock,
  type SessionSubject,
} from '../auth/sessions.js';
import { invalidToken, sessionOf, type TokenService } from '../auth/tokens.js';
import { notSetup } from '../auth/setup.js';
import { authenticateUser, parseCredentials, registerUser, stringFields } from '../auth/users.js';
import { policyDenied } from '../enforce/denials.js';
import type { AuthenticatedUser } from '../auth/users.js';
import { clientAddress } from './client-address.js';
import { readJsonBody } from './read-json-body.js';
import { sendJson } from './send-json.js';

export interface AdminCredentials {
  readonly username: string;
  readonly password: string;
}

export interface AuthRoutesDeps {
  readonly adapter: DbAdapter;
  readonly tokens: TokenService;
  readonly limiter: LoginRateLimiter;
  /** `-http.trust_proxy`: count a client under the address its proxy forwarded (client-address.ts). */
  readonly trustProxy: boolean;
  readonly hasher?: PasswordHasher;
  /** Creates the auth tables, default policies and admin once; then 409 `already_setup`. */
  readonly setup: () => Promise<AdminCredentials>;
  /** Called after a successful setup, before the answer: new tables and policies exist now. */
  readonly afterSetup: () => Promise<void>;
  /** Whether setup has run (`auth_users` exists), read fresh; before, no login can succeed. */
  readonly isSetUp: () => Promise<boolean>;
  /** The request's user; throws 401 `invalid_token` for a bad token, even here. */
  readonly authenticate: (req: Request) => AuthUser | Promise<AuthUser>;
  /** `-auth.refresh_ttl` in seconds. */
  readonly refreshTtlSeconds: number;
  /** Dates the sessions opened and refreshed here, and so their expiry (wire-auth.ts). */
  readonly sessionClock: SessionClock;
  /** This process changed a user's row or sessions (its user-state cache forgets them). */
  readonly userChanged: (userId: number) => void;
}

type AuthRoute = (
  deps: AuthRoutesDeps,
  req: Request,
  user: AuthUser,
) => Promise<{ readonly status: number; readonly body: unknown }>;

const hasherOption = (deps: AuthRoutesDeps) => (deps.hasher === undefined ? {} : { hasher: deps.hasher });

/** Login and refresh answer alike: a new access token for the session, and its refresh token. */
async function tokenPair(
  deps: AuthRoutesDeps,
  user: SessionSubject,
  session: { readonly sid: string; readonly refreshToken: string },
): Promise<{ readonly status: number; readonly body: unknown }> {
  const issued = await deps.tokens.issue({
    user_id: user.id,
    is_admin: user.is_admin,
    username: user.username,
    sid: session.sid,
  });
  return {
    status: 200,
    body: {
      token: issued.token,
      token_type: issued.token_type,
      expires_in: issued.expires_in,
      refresh_token: session.refreshToken,
    },
  };
}

/** `{"refresh_token": "…"}`; `required` false (logout): no body or `{}` is no token. */
function refreshTokenOf(body: unknown, required: boolean): string | undefined {
  const empty = body === undefined || (isPlainObject(body) && Object.keys(body).length === 0);
  if (!required && empty) return undefined;
  const token = stringFields(body, ['refresh_token']).refresh_token;
  if (token.length === 0) {
    throw new RestError('invalid_body', '"refresh_token" is required and must be a string', {
      details: { field: 'refresh_token' },
    });
  }
  return token;
}

const isPlainObject = (v: unknown): v is object => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A request that carries a body (logout's is optional). */
const hasBody = (req: Request): boolean =>
  req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;

/** The caller of an endpoint for logged-in users; anonymous → the one 401 of denials.ts. */
function loggedIn(user: AuthUser, path: string): number {
  if (!user.is_authenticated || user.id === null) {
    throw policyDenied(user, path, { message: 'log in first: this endpoint needs a Bearer token' });
  }
  return user.id;
}

/**
 * Before setup there are no auth tables, so an account endpoint fails in the database: that is
 * 409 `not_setup`, not 500. Asked only after such an error, so the schema is read fresh then.
 */
async function needsSetup<T>(deps: AuthRoutesDeps, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    // A missing auth table reads as a table that changed while serving (schema_changed).
    const fromDatabase = !isRestError(e) || e.category === 'internal' || e.code === 'schema_changed';
    if (fromDatabase && !(await deps.isSetUp())) throw notSetup(e);
    throw e;
  }
}

const routes: Readonly<Record<string, AuthRoute>> = {
  '/auth/setup': async (deps) => {
    const admin = await deps.setup();
    await deps.afterSetup();
    return { status: 201, body: { username: admin.username, password: admin.password } };
  },
  '/auth/register': async (deps, req) => {
    const credentials = parseCredentials(await readJsonBody(req));
    const address = clientAddress(req, deps.trustProxy);
    const user = await needsSetup(deps, async () => {
      // Each registration from a client address counts, whatever its outcome (docs/authentication.md).
      const attempt = await deps.limiter.begin({ address, purpose: 'register' });
      try {
        return await registerUser(deps.adapter, credentials, hasherOption(deps));
      } finally {
        await attempt.failed();
      }
    });
    return { status: 201, body: { id: user.id, username: user.username } };
  },
  '/auth/login': async (deps, req) => {
    const credentials = parseCredentials(await readJsonBody(req));
    const user: AuthenticatedUser = await needsSetup(deps, () =>
      authenticateUser(deps.adapter, credentials, {
        ...hasherOption(deps),
        limiter: deps.limiter,
        clientAddress: clientAddress(req, deps.trustProxy),
      }),
    );
    const session = await openSession(deps.adapter, user, {
      refreshTtlSeconds: deps.refreshTtlSeconds,
      now: deps.sessionClock.now,
    });
    // Past the cap of live sessions the oldest ended: their tokens stop working like any revocation.
    if (session.ended > 0) deps.userChanged(user.id);
    return tokenPair(deps, user, session);
  },
  // Without a body logging out is the client forgetting its token (docs/authentication.md); with a refresh
  // token its session ends — that refresh token and the session's access tokens. An unknown
  // refresh token changes nothing and is no error: the client is logged out either way.
  '/auth/logout': async (deps, req) => {
    const token = hasBody(req) ? refreshTokenOf(await readJsonBody(req), false) : undefined;
    if (token !== undefined) {
      const userId = await revokeByRefreshToken(deps.adapter, token);
      if (userId !== undefined) deps.userChanged(userId);
    }
    return { status: 200, body: {} };
  },
  '/auth/refresh': async (deps, req) => {
    const token = refreshTokenOf(await readJsonBody(req), true) ?? '';
    // Guessing refresh tokens counts toward the client address's login throttle (docs/authentication.md).
    const attempt = await deps.limiter.begin({ address: clientAddress(req, deps.trustProxy) });
    let rotation: Awaited<ReturnType<typeof rotateRefreshToken>>;
    try {
      rotation = await rotateRefreshToken(deps.adapter, token, {
        refreshTtlSeconds: deps.refreshTtlSeconds,
        now: deps.sessionClock.now,
      });
    } catch (e) {
      await attempt.abandoned();
      throw e;
    }
    switch (rotation.kind) {
      case 'unknown':
        await attempt.failed();
        throw invalidToken('unknown_refresh_token', 'no live refresh token has this value');
      case 'reused':
        await attempt.abandoned();
        deps.userChanged(rotation.userId);
        throw invalidToken('refresh_token_reused', 'a rotated refresh token was presented again');
      case 'revoked':
        await attempt.abandoned();
        throw invalidToken('session_revoked', "the refresh token's session is over");
      case 'rotated':
        await attempt.succeeded();
        deps.userChanged(rotation.user.id);
        return tokenPair(deps, rotation.user, rotation.session);
    }
  },
  '/auth/password': async (deps, req, user) => {
    const userId = loggedIn(user, req.path);
    const { current, next } = parsePasswordChange(await readJsonBody(req));
    await changeOwnPassword(
      { userId, sid: sessionOf(user)?.sid, currentPassword: current, newPassword: next },
      {
        adapter: deps.adapter,
        ...hasherOption(deps),
        limiter: deps.limiter,
        clientAddress: clientAddress(req, deps.trustProxy),
      },
    );
    deps.userChanged(userId);
    return { status: 200, body: {} };
  },
  // "Log out everywhere": every session of the caller, the one asking included.
  '/auth/sessions/revoke': async (deps, req, user) => {
    const userId = loggedIn(user, req.path);
    const revoked = await deps.adapter.transaction((tx) => revokeUserSessions(tx, deps.adapter, userId));
    deps.userChanged(userId);
    return { status: 200, body: { revoked } };
  },
};

const AUTH_PREFIX = '/auth/';

function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}

/** `/auth/…`, also with its first segment percent-encoded (`/%61uth/x`). */
function inAuthNamespace(path: string): boolean {
  if (path.startsWith(AUTH_PREFIX)) return true;
  const slash = path.indexOf('/', 1);
  if (slash === -1 || !path.slice(0, slash).includes('%')) return false;
  try {
    return decodeURIComponent(path.slice(1, slash)) === 'auth';
  } catch {
    return false;
  }
}

export function authRoutes(deps: AuthRoutesDeps): RequestHandler {
  return async (req: Request, res: Response, next): Promise<void> => {
    const path = pathOf(req.url);
    if (!inAuthNamespace(path)) {
      next();
      return;
    }
    // One trailing slash is ignored, as on the table endpoints.
    const key = path.length > AUTH_PREFIX.length && path.endsWith('/') ? path.slice(0, -1) : path;
    const route = Object.hasOwn(routes, key) ? routes[key] : undefined;
    if (route === undefined) throw new RestError('not_found', 'no such auth endpoint');
    if (req.method !== 'POST') {
      throw new RestError('method_not_allowed', `method ${req.method} is not allowed here`, {
        details: { allowed: ['POST'] },
        headers: { Allow: 'POST' },
      });
    }
    const user = await deps.authenticate(req);
    const result = await route(deps, req, user);
    sendJson(res, result.status, result.body);
  };
}

/** The `/auth/*` namespace while auth is disabled: 404 `auth_disabled`, nothing else served. */
export function authDisabledRoutes(): RequestHandler {
  return (req: Request, _res: Response, next): void => {
    if (!inAuthNamespace(pathOf(req.url))) {
      next();
      return;
    }
    throw new RestError('auth_disabled', 'auth is not enabled on this server');
  };
}

/**
 * `authenticate(req)` of the table and auth endpoints: no header → ANONYMOUS, bad token → 401. An
 * `apikey` header (what supabase-js sends beside `Authorization`) must hold a good token too; alone,
 * it is read as the bearer token (an anonymous API key → ANONYMOUS).
 */
export function tokenAuthenticate(tokens: TokenService): (req: Request) => Promise<AuthUser> {
  return async (req) => {
    const apikey = req.headers.apikey;
    if (apikey === undefined) return tokens.verify(req.headers.authorization);
    const keyUser = await tokens.verify(`Bearer ${typeof apikey === 'string' ? apikey : apikey.join(' ')}`);
    const { authorization } = req.headers;
    return authorization === undefined ? keyUser : tokens.verify(authorization);
  };
}
