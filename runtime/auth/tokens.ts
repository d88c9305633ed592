// JWT issue and verification (docs/authentication.md): HS256 only, `auth_user` from the verified claims,
// every bad token one 401 `invalid_token` whose message and `WWW-Authenticate` say why; verified
// tokens are cached until they expire so a request does not re-verify the signature. An anonymous
// API key (`{"role":"anon"}`, no `user_id`) is the anonymous user.

import { SignJWT, jwtVerify } from 'jose';
import type { JWTPayload } from 'jose';
import { RestError } from '../../errors/rest-error.js';
import { ANONYMOUS } from '../../compiler/types.js';
import type { AuthUser } from '../../compiler/types.js';

export const MIN_SECRET_BYTES = 32;
/** Clock skew accepted on `exp` and `nbf`, in seconds (at most 30 s). */
export const CLOCK_LEEWAY_SECONDS = 30;
export const DEFAULT_TOKEN_CACHE_SIZE = 10_000;

const ALGORITHM = 'HS256';

export interface TokenServiceOptions {
  readonly secret: string;
  readonly ttlSeconds: number;
  /** Milliseconds since the epoch; `Date.now` unless a test injects another clock. */
  readonly clock?: () => number;
  readonly cacheSize?: number;
}

export interface TokenSubject {
  readonly user_id: number;
  readonly is_admin: boolean;
  readonly username: string;
  /** The session the token belongs to (docs/authentication.md); absent only in tests of stateless tokens. */
  readonly sid?: string;
}

export interface IssuedToken {
  readonly token: string;
  readonly token_type: 'Bearer';
  readonly expires_in: number;
}

export interface TokenService {
  issue(subject: TokenSubject): Promise<IssuedToken>;
  /** `ANONYMOUS` without a header; the token's user, or 401 `invalid_token`, with one. */
  verify(authorization: string | undefined): Promise<AuthUser>;
}

interface CachedUser {
  readonly user: AuthUser;
  readonly exp: number | undefined;
  readonly nbf: number | undefined;
}

const BEARER = /^Bearer +([^\s]+) *$/i;
const BEARER_SCHEME = /^Bearer(?:\s|$)/i;
const INTEGER_STRING = /^-?[0-9]+$/;

/** Why a token is refused (docs/authentication.md); the code stays `invalid_token` for every one. */
export type TokenProblem =
  | 'missing_bearer'
  | 'malformed'
  | 'bad_signature'
  | 'wrong_algorithm'
  | 'expired'
  | 'not_yet_valid'
  | 'invalid_user_id'
  | 'session_revoked'
  | 'unknown_refresh_token'
  | 'refresh_token_reused';

// Also the RFC 6750 `error_description`, which allows no double quote and no backslash
// (https://www.rfc-editor.org/rfc/rfc6750#section-3).
export const TOKEN_PROBLEM_MESSAGES: Readonly<Record<TokenProblem, string>> = Object.freeze({
  missing_bearer: 'the Authorization header does not use the Bearer scheme',
  malformed: 'the token is malformed',
  bad_signature: 'the token signature is invalid',
  wrong_algorithm: 'the token is not signed with HS256',
  expired: 'the token has expired',
  not_yet_valid: 'the token is not valid yet',
  invalid_user_id: 'the token has no valid user_id claim',
  session_revoked: 'the session has been revoked',
  unknown_refresh_token: 'the refresh token is unknown or has expired',
  refresh_token_reused: 'the refresh token was already used, so its session has been revoked',
});

/** The 401 of a bad token: the reason in the message and in `WWW-Authenticate`; details in `cause`. */
export function invalidToken(problem: TokenProblem, detail: string, cause?: unknown): RestError {
  const message = TOKEN_PROBLEM_MESSAGES[problem];
  return new RestError('invalid_token', message, {
    cause: new Error(detail, cause === undefined ? undefined : { cause }),
    headers: { 'WWW-Authenticate': `Bearer error="invalid_token", error_description="${message}"` },
  });
}

// jose's error codes (https://github.com/panva/jose/blob/main/docs/util/errors/README.md); a
// claim check names its claim: `exp` → expired, `nbf` → not yet valid, a mistyped one → malformed.
function problemOf(e: unknown): TokenProblem {
  const code = (e as { code?: unknown } | null)?.code;
  switch (code) {
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return 'wrong_algorithm';
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return 'bad_signature';
    case 'ERR_JWT_EXPIRED':
      return 'expired';
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED': {
      const { claim, reason } = e as { claim?: unknown; reason?: unknown };
      return claim === 'nbf' && reason === 'check_failed' ? 'not_yet_valid' : 'malformed';
    }
    default:
      return 'malformed';
  }
}

/** `user_id` as a safe integer, from a JSON integer or an integer string. */
function userIdOf(claim: unknown): number | undefined {
  let id: number;
  if (typeof claim === 'number') id = claim;
  else if (typeof claim === 'string' && INTEGER_STRING.test(claim)) id = Number(claim);
  else return undefined;
  return Number.isSafeInteger(id) ? id : undefined;
}

/** Freezes a JSON value all the way down: a cached user is shared by many requests. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** The claims of an anonymous API key: what `rest auth anon-key` signs (docs/authentication.md). */
export const ANON_KEY_CLAIMS: Readonly<Record<string, unknown>> = Object.freeze({ role: 'anon' });

/** A verified token that carries `"role": "anon"` and no `user_id` is an anonymous API key. */
function isAnonKey(claims: JWTPayload): boolean {
  return claims['role'] === ANON_KEY_CLAIMS['role'] && claims['user_id'] === undefined;
}

/**
 * `auth_user` of docs/authentication.md from verified claims: the anonymous user for an anonymous
 * API key; throws when `user_id` is not an integer.
 */
export function authUserFromClaims(claims: JWTPayload): AuthUser {
  if (isAnonKey(claims)) return ANONYMOUS;
  const id = userIdOf(claims['user_id']);
  if (id === undefined) {
    const detail =
      claims['user_id'] === undefined ? 'user_id claim is missing' : 'user_id claim is not an integer';
    throw invalidToken('invalid_user_id', detail);
  }
  const username = claims['username'];
  return Object.freeze({
    id,
    is_admin: claims['is_admin'] === true,
    username: typeof username === 'string' ? username : null,
    is_authenticated: true,
    claims: deepFreeze(structuredClone(claims)),
  });
}

/** The secret as an HS256 key; a secret under MIN_SECRET_BYTES is refused. */
function secretKey(secret: string): Uint8Array {
  const key = new TextEncoder().encode(secret);
  if (key.byteLength < MIN_SECRET_BYTES) {
    throw new RestError('weak_secret', `the auth secret must be at least ${MIN_SECRET_BYTES} bytes long`);
  }
  return key;
}

/**
 * The anonymous API key of `rest auth anon-key`: ANON_KEY_CLAIMS signed with the secret, nothing
 * else (no `iat`, no `exp`), so one secret always gives the same key and it lives as long as the secret.
 */
export function signAnonKey(secret: string): Promise<string> {
  return new SignJWT({ ...ANON_KEY_CLAIMS })
    .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
    .sign(secretKey(secret));
}

export function createTokenService(options: TokenServiceOptions): TokenService {
  const key = secretKey(options.secret);
  const { ttlSeconds } = options;
  if (!Number.isSafeInteger(ttlSeconds) || ttlSeconds <= 0) {
    throw new RestError('invalid_token_ttl', 'the token lifetime must be a positive number of seconds');
  }
  const clock = options.clock ?? Date.now;
  const cacheSize = options.cacheSize ?? DEFAULT_TOKEN_CACHE_SIZE;
  const cache = new Map<string, CachedUser>();
  const nowSeconds = (): number => Math.floor(clock() / 1000);

  // Mirrors jose's own checks, so a cached token expires exactly when a fresh one would.
  const cachedProblem = (entry: CachedUser, now: number): TokenProblem | undefined => {
    if (entry.exp !== undefined && entry.exp <= now - CLOCK_LEEWAY_SECONDS) return 'expired';
    if (entry.nbf !== undefined && entry.nbf > now + CLOCK_LEEWAY_SECONDS) return 'not_yet_valid';
    return undefined;
  };

  function remember(token: string, entry: CachedUser): void {
    if (cache.size >= cacheSize) {
      const oldest = cache.keys().next();
      if (oldest.done !== true) cache.delete(oldest.value);
    }
    cache.set(token, entry);
  }

  async function verifyToken(token: string): Promise<AuthUser> {
    const now = nowSeconds();
    const hit = cache.get(token);
    if (hit !== undefined) {
      cache.delete(token);
      const problem = cachedProblem(hit, now);
      if (problem !== undefined) throw invalidToken(problem, `cached token is ${problem}`);
      cache.set(token, hit);
      return hit.user;
    }
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, key, {
        algorithms: [ALGORITHM],
        clockTolerance: CLOCK_LEEWAY_SECONDS,
        currentDate: new Date(clock()),
      }));
    } catch (e) {
      throw invalidToken(problemOf(e), e instanceof Error ? e.message : 'token verification failed', e);
    }
    const user = authUserFromClaims(payload);
    remember(token, { user, exp: payload.exp, nbf: payload.nbf });
    return user;
  }

  return {
    async issue(subject) {
      const now = nowSeconds();
      const token = await new SignJWT({
        user_id: subject.user_id,
        is_admin: subject.is_admin,
        username: subject.username,
        ...(subject.sid === undefined ? {} : { sid: subject.sid }),
      })
        .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
        .setIssuedAt(now)
        .setExpirationTime(now + ttlSeconds)
        .sign(key);
      return { token, token_type: 'Bearer', expires_in: ttlSeconds };
    },

    async verify(authorization) {
      if (authorization === undefined) return ANONYMOUS;
      const m = BEARER.exec(authorization);
      if (m !== null) return verifyToken(m[1] ?? '');
      throw BEARER_SCHEME.test(authorization)
        ? invalidToken('malformed', 'the Bearer scheme is not followed by exactly one token')
        : invalidToken('missing_bearer', 'the Authorization header does not start with Bearer');
    },
  };
}

/** The session a built-in user's token belongs to: claims `user_id` and `sid` (docs/authentication.md). */
export function sessionOf(user: AuthUser): { readonly userId: number; readonly sid: string } | undefined {
  const sid = user.claims['sid'];
  if (!user.is_authenticated || user.id === null || sid === undefined) return undefined;
  if (typeof sid !== 'string') throw invalidToken('malformed', 'the sid claim is not a string');
  return { userId: user.id, sid };
}

/** The user behind a live session: what a request's `auth_user` takes from the database. */
export interface SessionUser {
  readonly username: string;
  readonly isAdmin: boolean;
}

/** Where a built-in user's session is judged (runtime/auth/user-states.ts). */
export interface SessionUsers {
  /** The session's user, or undefined when the session is over or the user is gone. */
  sessionUser(userId: number, sid: string): Promise<SessionUser | undefined>;
}

/**
 * `verify` of docs/authentication.md: a token with `sid` is a built-in user's, good only while its session
 * lives, and its `is_admin` and `username` are the stored user's (a demotion counts at once);
 * a token without one (another system's) stays stateless.
 */
export function withSessions(tokens: TokenService, sessions: SessionUsers): TokenService {
  return {
    issue: (subject) => tokens.issue(subject),
    async verify(authorization) {
      const user = await tokens.verify(authorization);
      const session = sessionOf(user);
      if (session === undefined) return user;
      const stored = await sessions.sessionUser(session.userId, session.sid);
      if (stored === undefined) throw invalidToken('session_revoked', "the token's session is over");
      if (stored.isAdmin === user.is_admin && stored.username === user.username) return user;
      return Object.freeze({ ...user, is_admin: stored.isAdmin, username: stored.username });
    },
  };
}
