// The `/auth/*` namespace of SPEC §3.1. Auth enabled: setup, register, login, logout (other
// methods → 405), any other `/auth/<x>` → 404 `not_found`. Auth disabled: every `/auth/*` → 404
// `auth_disabled`. Paths outside the namespace fall through to the table endpoints.

import type { Request, RequestHandler, Response } from 'express';
import type { AuthUser } from '../../compiler/types.js';
import { RestError, isRestError } from '../../errors/rest-error.js';
import type { DbAdapter } from '../db/adapter.js';
import type { PasswordHasher } from '../auth/passwords.js';
import type { LoginRateLimiter } from '../auth/rate-limiter.js';
import type { TokenService } from '../auth/tokens.js';
import { authenticateUser, invalidCredentials, parseCredentials, registerUser } from '../auth/users.js';
import type { PublicUser } from '../auth/users.js';
import { clientAddress } from './client-address.js';
import { readJsonBody } from './read-json-body.js';

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
}

type AuthRoute = (
  deps: AuthRoutesDeps,
  req: Request,
) => Promise<{ readonly status: number; readonly body: unknown }>;

const hasherOption = (deps: AuthRoutesDeps) => (deps.hasher === undefined ? {} : { hasher: deps.hasher });

const routes: Readonly<Record<string, AuthRoute>> = {
  '/auth/setup': async (deps) => {
    const admin = await deps.setup();
    await deps.afterSetup();
    return { status: 201, body: { username: admin.username, password: admin.password } };
  },
  '/auth/register': async (deps, req) => {
    const credentials = parseCredentials(await readJsonBody(req));
    const user = await registerUser(deps.adapter, credentials, hasherOption(deps));
    return { status: 201, body: { id: user.id, username: user.username } };
  },
  '/auth/login': async (deps, req) => {
    const credentials = parseCredentials(await readJsonBody(req));
    let user: PublicUser;
    try {
      user = await authenticateUser(deps.adapter, credentials, {
        ...hasherOption(deps),
        limiter: deps.limiter,
        clientAddress: clientAddress(req, deps.trustProxy),
      });
    } catch (e) {
      // Before setup there is no table to count failures in and no user: a login fails as an
      // unknown user's. Asked only after a database error, so the schema is read fresh then.
      const fromDatabase = !isRestError(e) || e.category === 'internal';
      if (fromDatabase && !(await deps.isSetUp())) throw invalidCredentials();
      throw e;
    }
    const issued = await deps.tokens.issue({
      user_id: user.id,
      is_admin: user.is_admin,
      username: user.username,
    });
    return {
      status: 200,
      body: { token: issued.token, token_type: issued.token_type, expires_in: issued.expires_in },
    };
  },
  // Tokens are not revoked (SPEC §3.1): logging out is the client forgetting its token.
  '/auth/logout': async () => ({ status: 200, body: {} }),
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
    if (route === undefined) throw new RestError('not_found', 'not_found', 'no such auth endpoint');
    if (req.method !== 'POST') {
      throw new RestError(
        'method_not_allowed',
        'method_not_allowed',
        `method ${req.method} is not allowed here`,
        {
          details: { allowed: ['POST'] },
          headers: { Allow: 'POST' },
        },
      );
    }
    await deps.authenticate(req);
    const result = await route(deps, req);
    res.status(result.status).json(result.body);
  };
}

/** The `/auth/*` namespace while auth is disabled: 404 `auth_disabled`, nothing else served. */
export function authDisabledRoutes(): RequestHandler {
  return (req: Request, _res: Response, next): void => {
    if (!inAuthNamespace(pathOf(req.url))) {
      next();
      return;
    }
    throw new RestError('not_found', 'auth_disabled', 'auth is not enabled on this server');
  };
}

/** `authenticate(req)` of the table and auth endpoints: no header → ANONYMOUS, bad token → 401. */
export function tokenAuthenticate(tokens: TokenService): (req: Request) => Promise<AuthUser> {
  return (req) => tokens.verify(req.headers.authorization);
}
