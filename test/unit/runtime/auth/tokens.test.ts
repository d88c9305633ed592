import { SignJWT, UnsecuredJWT, generateKeyPair } from 'jose';
import type { JWTPayload } from 'jose';
import { beforeEach, describe, expect, it } from 'vitest';
import { ANONYMOUS } from '../../../../compiler/types.js';
import { RestError } from '../../../../errors/rest-error.js';
import { TOKEN_PROBLEM_MESSAGES, createTokenService, signAnonKey } from '../../../../runtime/auth/tokens.js';
import type { TokenProblem, TokenService } from '../../../../runtime/auth/tokens.js';

const SECRET = 'a-test-secret-that-is-32-bytes!!';
const OTHER_SECRET = 'another-secret-of-thirty-two-b!!';
const key = (secret: string): Uint8Array => new TextEncoder().encode(secret);
const T0 = 1_700_000_000;

let nowMs = T0 * 1000;
let service: TokenService;

beforeEach(() => {
  nowMs = T0 * 1000;
  service = createTokenService({ secret: SECRET, ttlSeconds: 3600, clock: () => nowMs });
});

interface SignOptions {
  readonly secret?: string;
  readonly alg?: string;
  readonly exp?: number;
  readonly nbf?: number;
}

// Claims are loosely typed on purpose: the bad cases sign claims jose's types would forbid.
async function sign(payload: Readonly<Record<string, unknown>>, options: SignOptions = {}): Promise<string> {
  let jwt = new SignJWT(payload as JWTPayload)
    .setProtectedHeader({ alg: options.alg ?? 'HS256' })
    .setIssuedAt(T0);
  if (options.exp !== undefined) jwt = jwt.setExpirationTime(options.exp);
  if (options.nbf !== undefined) jwt = jwt.setNotBefore(options.nbf);
  return jwt.sign(key(options.secret ?? SECRET));
}

async function rejection(header: string | undefined): Promise<RestError> {
  try {
    await service.verify(header);
  } catch (e) {
    if (e instanceof RestError) return e;
    throw e;
  }
  throw new Error(`accepted ${String(header)}`);
}

describe('createTokenService', () => {
  it.each([
    ['31 ASCII bytes', 'x'.repeat(31)],
    ['15 two-byte characters (30 bytes)', 'é'.repeat(15)],
    ['empty', ''],
  ])('refuses a secret of %s', (_label, secret) => {
    expect(() => createTokenService({ secret, ttlSeconds: 60 })).toThrowError(
      expect.objectContaining({ category: 'usage', code: 'weak_secret' }),
    );
  });

  it('accepts a secret of 32 bytes, counted in UTF-8', () => {
    expect(() => createTokenService({ secret: 'é'.repeat(16), ttlSeconds: 60 })).not.toThrow();
  });

  it.each([0, -1, 1.5])('refuses a token lifetime of %j seconds', (ttlSeconds) => {
    expect(() => createTokenService({ secret: SECRET, ttlSeconds })).toThrowError(
      expect.objectContaining({ code: 'invalid_token_ttl' }),
    );
  });
});

describe('issue', () => {
  it('issues an HS256 token with user_id, is_admin, username and exp = now + ttl', async () => {
    const issued = await service.issue({ user_id: 7, is_admin: true, username: 'Alice' });
    expect(issued.token_type).toBe('Bearer');
    expect(issued.expires_in).toBe(3600);
    const [header, payload] = issued.token
      .split('.')
      .slice(0, 2)
      .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>);
    expect(header).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(payload).toEqual({ user_id: 7, is_admin: true, username: 'Alice', iat: T0, exp: T0 + 3600 });
  });

  it('round-trips through verify', async () => {
    const { token } = await service.issue({ user_id: 7, is_admin: false, username: 'Alice' });
    const user = await service.verify(`Bearer ${token}`);
    expect(user).toMatchObject({ id: 7, is_admin: false, username: 'Alice', is_authenticated: true });
    expect(user.claims).toMatchObject({ user_id: 7, is_admin: false, username: 'Alice', exp: T0 + 3600 });
  });
});

describe('verify: accepted tokens', () => {
  it('answers ANONYMOUS without an Authorization header', async () => {
    expect(await service.verify(undefined)).toBe(ANONYMOUS);
  });

  it.each([
    ['an integer user_id', { user_id: 12 }, { id: 12, is_admin: false, username: null }],
    ['an integer-string user_id', { user_id: '12' }, { id: 12, is_admin: false, username: null }],
    ['a negative integer user_id', { user_id: -3 }, { id: -3, is_admin: false, username: null }],
    ['is_admin true', { user_id: 1, is_admin: true }, { id: 1, is_admin: true, username: null }],
    [
      'is_admin "true" (a string is not true)',
      { user_id: 1, is_admin: 'true' },
      { id: 1, is_admin: false, username: null },
    ],
    ['is_admin 1', { user_id: 1, is_admin: 1 }, { id: 1, is_admin: false, username: null }],
    ['a username claim', { user_id: 1, username: 'bob' }, { id: 1, is_admin: false, username: 'bob' }],
    ['a non-string username claim', { user_id: 1, username: 5 }, { id: 1, is_admin: false, username: null }],
  ])('accepts an external token with %s', async (_label, payload, expected) => {
    const user = await service.verify(`Bearer ${await sign(payload)}`);
    expect(user).toMatchObject({ ...expected, is_authenticated: true });
  });

  it('exposes every claim, including custom ones, frozen', async () => {
    const user = await service.verify(`Bearer ${await sign({ user_id: 1, org_id: 42, roles: ['a'] })}`);
    expect(user.claims).toEqual({ user_id: 1, org_id: 42, roles: ['a'], iat: T0 });
    expect(Object.isFrozen(user.claims)).toBe(true);
    expect(Object.isFrozen(user.claims['roles'])).toBe(true);
  });

  it('accepts the scheme in any case', async () => {
    const token = await sign({ user_id: 1 });
    expect((await service.verify(`bearer ${token}`)).id).toBe(1);
    expect((await service.verify(`BEARER ${token}`)).id).toBe(1);
  });

  it('accepts a token expired 29 s ago (clock leeway)', async () => {
    const token = await sign({ user_id: 1 }, { exp: T0 - 29 });
    expect((await service.verify(`Bearer ${token}`)).id).toBe(1);
  });

  it('accepts a token valid from 29 s in the future (clock leeway)', async () => {
    const token = await sign({ user_id: 1 }, { nbf: T0 + 29 });
    expect((await service.verify(`Bearer ${token}`)).id).toBe(1);
  });
});

describe('anonymous API keys', () => {
  it('signs exactly {"role":"anon"} with HS256, the same key for the same secret', async () => {
    const anonKey = await signAnonKey(SECRET);
    const [header, payload] = anonKey
      .split('.')
      .slice(0, 2)
      .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()));
    expect(header).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(payload).toEqual({ role: 'anon' });
    expect(await signAnonKey(SECRET)).toBe(anonKey);
    expect(await signAnonKey(OTHER_SECRET)).not.toBe(anonKey);
  });

  it('refuses to sign with a secret under 32 bytes', () => {
    expect(() => signAnonKey('short')).toThrow(expect.objectContaining({ code: 'weak_secret' }));
  });

  it.each([
    ['the printed key', () => signAnonKey(SECRET)],
    ['a key with iat and exp', () => sign({ role: 'anon' }, { exp: T0 + 60 })],
    ['a key with other claims beside role', () => sign({ role: 'anon', ref: 'project' })],
  ])('verifies %s as ANONYMOUS', async (_label, key) => {
    expect(await service.verify(`Bearer ${await key()}`)).toBe(ANONYMOUS);
  });

  it('takes a token with role anon and a user_id as that user', async () => {
    const user = await service.verify(`Bearer ${await sign({ role: 'anon', user_id: 4 })}`);
    expect(user).toMatchObject({ id: 4, is_authenticated: true });
  });

  it.each([
    ['another role', async () => sign({ role: 'authenticated' }), 'invalid_user_id'],
    ['role "Anon"', async () => sign({ role: 'Anon' }), 'invalid_user_id'],
    ['role ["anon"]', async () => sign({ role: ['anon'] }), 'invalid_user_id'],
    ['a bad signature', async () => sign({ role: 'anon' }, { secret: OTHER_SECRET }), 'bad_signature'],
    ['an expired key', async () => sign({ role: 'anon' }, { exp: T0 - 31 }), 'expired'],
    ['an HS512 key', async () => sign({ role: 'anon' }, { alg: 'HS512' }), 'wrong_algorithm'],
    ['an unsigned key', async () => new UnsecuredJWT({ role: 'anon' }).encode(), 'wrong_algorithm'],
  ] as const)('rejects an anon key with %s', async (_label, token, problem) => {
    const e = await rejection(`Bearer ${await token()}`);
    expect(e.code).toBe('invalid_token');
    expect(e.message).toBe(TOKEN_PROBLEM_MESSAGES[problem]);
  });
});

describe('verify: every invalid token is 401 invalid_token saying why', () => {
  const cases: readonly (readonly [string, () => Promise<string>, TokenProblem, RegExp])[] = [
    ['an empty header', async () => '', 'missing_bearer', /Bearer/],
    ['the scheme alone', async () => 'Bearer', 'malformed', /Bearer/],
    ['an empty token', async () => 'Bearer ', 'malformed', /Bearer/],
    [
      'another scheme',
      async () => `Basic ${Buffer.from('a:b').toString('base64')}`,
      'missing_bearer',
      /Bearer/,
    ],
    ['a token without a scheme', async () => sign({ user_id: 1 }), 'missing_bearer', /Bearer/],
    [
      'two tokens',
      async () => `Bearer ${await sign({ user_id: 1 })} ${await sign({ user_id: 2 })}`,
      'malformed',
      /Bearer/,
    ],
    ['a malformed token', async () => 'Bearer not.a.jwt', 'malformed', /./],
    ['a token of two parts', async () => 'Bearer abc.def', 'malformed', /./],
    [
      'a wrong signature',
      async () => `Bearer ${await sign({ user_id: 1 }, { secret: OTHER_SECRET })}`,
      'bad_signature',
      /signature/,
    ],
    [
      'a tampered payload',
      async () => {
        const [h, , s] = (await sign({ user_id: 1 })).split('.');
        const forged = Buffer.from(JSON.stringify({ user_id: 1, is_admin: true })).toString('base64url');
        return `Bearer ${h}.${forged}.${s}`;
      },
      'bad_signature',
      /signature/,
    ],
    [
      'an expired token (31 s ago)',
      async () => `Bearer ${await sign({ user_id: 1 }, { exp: T0 - 31 })}`,
      'expired',
      /exp/,
    ],
    [
      'a token not valid before 31 s from now',
      async () => `Bearer ${await sign({ user_id: 1 }, { nbf: T0 + 31 })}`,
      'not_yet_valid',
      /nbf/,
    ],
    [
      'alg none',
      async () => `Bearer ${new UnsecuredJWT({ user_id: 1, is_admin: true }).encode()}`,
      'wrong_algorithm',
      /alg/,
    ],
    [
      'alg none with a signature part',
      async () => `Bearer ${new UnsecuredJWT({ user_id: 1 }).encode()}c2ln`,
      'wrong_algorithm',
      /alg/,
    ],
    [
      'HS512 with the same secret',
      async () => `Bearer ${await sign({ user_id: 1 }, { alg: 'HS512' })}`,
      'wrong_algorithm',
      /alg/,
    ],
    [
      'HS384 with the same secret',
      async () => `Bearer ${await sign({ user_id: 1 }, { alg: 'HS384' })}`,
      'wrong_algorithm',
      /alg/,
    ],
    [
      'RS256',
      async () => {
        const { privateKey } = await generateKeyPair('RS256');
        const token = await new SignJWT({ user_id: 1 }).setProtectedHeader({ alg: 'RS256' }).sign(privateKey);
        return `Bearer ${token}`;
      },
      'wrong_algorithm',
      /alg/,
    ],
    [
      'a missing user_id',
      async () => `Bearer ${await sign({ sub: '1' })}`,
      'invalid_user_id',
      /user_id claim is missing/,
    ],
    [
      'a float user_id',
      async () => `Bearer ${await sign({ user_id: 1.5 })}`,
      'invalid_user_id',
      /user_id claim is not an integer/,
    ],
    [
      'user_id "12a"',
      async () => `Bearer ${await sign({ user_id: '12a' })}`,
      'invalid_user_id',
      /user_id claim is not an integer/,
    ],
    [
      'user_id "1.0"',
      async () => `Bearer ${await sign({ user_id: '1.0' })}`,
      'invalid_user_id',
      /user_id claim is not an integer/,
    ],
    [
      'user_id ""',
      async () => `Bearer ${await sign({ user_id: '' })}`,
      'invalid_user_id',
      /user_id claim is not an integer/,
    ],
    [
      'user_id true',
      async () => `Bearer ${await sign({ user_id: true })}`,
      'invalid_user_id',
      /user_id claim is not an integer/,
    ],
    [
      'user_id null',
      async () => `Bearer ${await sign({ user_id: null })}`,
      'invalid_user_id',
      /user_id claim is not an integer/,
    ],
    [
      'user_id [1]',
      async () => `Bearer ${await sign({ user_id: [1] })}`,
      'invalid_user_id',
      /user_id claim is not an integer/,
    ],
    [
      'user_id beyond 2^53',
      async () => `Bearer ${await sign({ user_id: '9007199254740993' })}`,
      'invalid_user_id',
      /not an integer/,
    ],
    ['a string exp', async () => `Bearer ${await sign({ user_id: 1, exp: 'tomorrow' })}`, 'malformed', /exp/],
  ];

  it.each(cases)('rejects %s', async (_label, header, problem, reason) => {
    const e = await rejection(await header());
    expect(e.category).toBe('unauthenticated');
    expect(e.status).toBe(401);
    expect(e.code).toBe('invalid_token');
    expect(e.message).toBe(TOKEN_PROBLEM_MESSAGES[problem]);
    expect(e.headers).toEqual({
      'WWW-Authenticate': `Bearer error="invalid_token", error_description="${TOKEN_PROBLEM_MESSAGES[problem]}"`,
    });
    expect(e.cause).toBeInstanceOf(Error);
    expect((e.cause as Error).message).toMatch(reason);
  });

  it('says each reason in characters RFC 6750 allows in error_description', () => {
    for (const message of Object.values(TOKEN_PROBLEM_MESSAGES))
      expect(message).toMatch(/^[\x20\x21\x23-\x5B\x5D-\x7E]+$/);
  });

  it('never shows the token or the secret in the public body', async () => {
    const token = await sign({ user_id: 1 }, { secret: OTHER_SECRET });
    const body = JSON.stringify((await rejection(`Bearer ${token}`)).toBody());
    expect(body).not.toContain(token.slice(0, 20));
    expect(body).not.toContain(SECRET);
  });
});

describe('verify: cache of verified tokens', () => {
  it('returns the cached user for a token seen before, without verifying again', async () => {
    const header = `Bearer ${await sign({ user_id: 5 })}`;
    const first = await service.verify(header);
    expect(await service.verify(header)).toBe(first);
  });

  it('stops accepting a cached token once it expires (30 s leeway included)', async () => {
    const { token } = await service.issue({ user_id: 5, is_admin: false, username: 'e' });
    const header = `Bearer ${token}`;
    await service.verify(header);
    nowMs = (T0 + 3600 + 29) * 1000;
    expect((await service.verify(header)).id).toBe(5);
    nowMs = (T0 + 3600 + 30) * 1000;
    expect((await rejection(header)).message).toBe(TOKEN_PROBLEM_MESSAGES.expired);
    nowMs = (T0 + 3600 + 31) * 1000;
    expect((await rejection(header)).code).toBe('invalid_token');
  });

  it('keeps at most cacheSize tokens, forgetting the least recently used', async () => {
    const small = createTokenService({ secret: SECRET, ttlSeconds: 60, clock: () => nowMs, cacheSize: 2 });
    const headers = await Promise.all([1, 2, 3].map(async (id) => `Bearer ${await sign({ user_id: id })}`));
    const [h1 = '', h2 = '', h3 = ''] = headers;
    const u1 = await small.verify(h1);
    const u2 = await small.verify(h2);
    expect(await small.verify(h1)).toBe(u1);
    await small.verify(h3);
    expect(await small.verify(h1)).toBe(u1);
    const u2again = await small.verify(h2);
    expect(u2again).not.toBe(u2);
    expect(u2again).toEqual(u2);
  });

  it('does not cache a rejected token', async () => {
    const header = `Bearer ${await sign({ user_id: 1 }, { nbf: T0 + 100 })}`;
    expect((await rejection(header)).code).toBe('invalid_token');
    nowMs = (T0 + 100) * 1000;
    expect((await service.verify(header)).id).toBe(1);
  });
});
