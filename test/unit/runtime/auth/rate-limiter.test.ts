import { describe, expect, it } from 'vitest';
import { RestError } from '../../../../errors/rest-error.js';
import { addressKey, createLoginRateLimiter } from '../../../../runtime/auth/rate-limiter.js';
import type { LoginRateLimiter } from '../../../../runtime/auth/rate-limiter.js';

const MIN = 60_000;

function setup(options: { readonly maxKeys?: number } = {}) {
  let now = 1_000_000;
  const limiter = createLoginRateLimiter({
    perUsername: { maxFailures: 3, windowSeconds: 600 },
    perAddress: { maxFailures: 5, windowSeconds: 600 },
    clock: () => now,
    ...options,
  });
  return { limiter, advance: (ms: number) => (now += ms) };
}

/** An attempt that ends with wrong credentials: it simply stays counted. */
const fail = (limiter: LoginRateLimiter, user: string, address: string): void => {
  limiter.begin(user, address);
};

/** Whether an attempt may start now (the probe itself is not counted). */
function allowed(limiter: LoginRateLimiter, user: string, address: string): boolean {
  try {
    limiter.begin(user, address).abandoned();
    return true;
  } catch (e) {
    if (e instanceof RestError && e.code === 'too_many_attempts') return false;
    throw e;
  }
}

function refusal(limiter: LoginRateLimiter, user: string, address: string): RestError {
  try {
    limiter.begin(user, address).abandoned();
  } catch (e) {
    if (e instanceof RestError) return e;
    throw e;
  }
  throw new Error('not refused');
}

describe('createLoginRateLimiter', () => {
  it('has defaults of 5 failures per username and 20 per address in 15 minutes', () => {
    let now = 0;
    const limiter = createLoginRateLimiter({ clock: () => now });
    for (let i = 0; i < 5; i++) fail(limiter, 'alice', `10.0.0.${i}`);
    expect(refusal(limiter, 'alice', '10.0.1.1').headers).toEqual({ 'Retry-After': '900' });
    for (let i = 0; i < 20; i++) fail(limiter, `user${i}`, '10.0.0.99');
    expect(allowed(limiter, 'bob', '10.0.0.99')).toBe(false);
    now += 900_000;
    expect(allowed(limiter, 'alice', '10.0.1.1')).toBe(true);
    expect(allowed(limiter, 'bob', '10.0.0.99')).toBe(true);
  });

  it('refuses a username after maxFailures failures, from any address, with 429 and Retry-After', () => {
    const { limiter, advance } = setup();
    for (let i = 0; i < 3; i++) {
      fail(limiter, 'alice', `10.0.0.${i}`);
      advance(MIN);
    }
    const e = refusal(limiter, 'alice', '192.0.2.1');
    expect(e.category).toBe('rate_limited');
    expect(e.status).toBe(429);
    expect(e.code).toBe('too_many_attempts');
    // The first failure leaves the 10-minute window 7 minutes from now.
    expect(e.headers).toEqual({ 'Retry-After': String(7 * 60) });
    expect(e.details).toEqual({ retry_after: 7 * 60 });
    expect(allowed(limiter, 'bob', '192.0.2.1')).toBe(true);
  });

  it('counts attempts from their start: parallel attempts cannot all pass while passwords are compared', () => {
    const { limiter } = setup();
    const started = [0, 1, 2].map((i) => limiter.begin('alice', `10.0.0.${i}`));
    expect(started).toHaveLength(3);
    expect(refusal(limiter, 'alice', '10.0.0.9').code).toBe('too_many_attempts');
  });

  it('uncounts a successful attempt and clears the username, but keeps earlier address failures', () => {
    const { limiter } = setup();
    fail(limiter, 'alice', '198.51.100.1');
    fail(limiter, 'alice', '198.51.100.1');
    limiter.begin('alice', '198.51.100.1').succeeded();
    fail(limiter, 'alice', '198.51.100.1');
    fail(limiter, 'alice', '198.51.100.1');
    expect(allowed(limiter, 'alice', '198.51.100.2')).toBe(true);
    fail(limiter, 'alice', '198.51.100.1');
    expect(allowed(limiter, 'alice', '198.51.100.2')).toBe(false);
    // 5 failures from .1 (the success is not one of them): the address is at its limit.
    expect(allowed(limiter, 'carol', '198.51.100.1')).toBe(false);
  });

  it('never counts successful logins against a shared address', () => {
    const { limiter } = setup();
    for (let i = 0; i < 50; i++) limiter.begin(`user${i}`, '203.0.113.1').succeeded();
    expect(allowed(limiter, 'someone', '203.0.113.1')).toBe(true);
  });

  it('uncounts an abandoned attempt (e.g. the database was down), once', () => {
    const { limiter } = setup();
    for (let i = 0; i < 10; i++) {
      const attempt = limiter.begin('alice', '192.0.2.3');
      attempt.abandoned();
      attempt.abandoned();
      attempt.succeeded();
    }
    fail(limiter, 'alice', '192.0.2.3');
    fail(limiter, 'alice', '192.0.2.3');
    expect(allowed(limiter, 'alice', '192.0.2.3')).toBe(true);
  });

  it('uses a sliding window: the oldest failure leaving the window allows one more attempt', () => {
    const { limiter, advance } = setup();
    fail(limiter, 'alice', 'a1');
    advance(5 * MIN);
    fail(limiter, 'alice', 'a2');
    fail(limiter, 'alice', 'a3');
    expect(allowed(limiter, 'alice', 'a4')).toBe(false);
    advance(5 * MIN - 1000);
    expect(refusal(limiter, 'alice', 'a4').headers['Retry-After']).toBe('1');
    advance(1000);
    expect(allowed(limiter, 'alice', 'a4')).toBe(true);
    fail(limiter, 'alice', 'a4');
    expect(refusal(limiter, 'alice', 'a4').headers['Retry-After']).toBe(String(5 * 60));
  });

  it('refuses an address after its own limit, whatever the username', () => {
    const { limiter } = setup();
    for (let i = 0; i < 5; i++) fail(limiter, `user${i}`, '203.0.113.7');
    expect(refusal(limiter, 'someone-new', '203.0.113.7').code).toBe('too_many_attempts');
    expect(allowed(limiter, 'someone-new', '203.0.113.8')).toBe(true);
  });

  it('keeps at most maxKeys keys, forgetting the least recently failed', () => {
    const { limiter } = setup({ maxKeys: 3 });
    for (let i = 0; i < 3; i++) fail(limiter, 'victim', `addr-${i}`);
    expect(allowed(limiter, 'victim', 'elsewhere')).toBe(false);
    for (let i = 0; i < 3; i++) fail(limiter, `spray-${i}`, `spray-addr-${i}`);
    expect(allowed(limiter, 'victim', 'elsewhere')).toBe(true);
    expect(allowed(limiter, 'spray-0', 'elsewhere')).toBe(true);
  });

  it('counts IPv4-mapped IPv6 as IPv4 and an IPv6 /64 as one address', () => {
    const { limiter } = setup();
    for (let i = 0; i < 5; i++) fail(limiter, `u${i}`, `2001:db8:1:2::${i + 1}`);
    expect(allowed(limiter, 'x', '2001:db8:1:2:ffff::9')).toBe(false);
    expect(allowed(limiter, 'x', '2001:db8:1:3::1')).toBe(true);
    for (let i = 0; i < 5; i++) fail(limiter, `v${i}`, '::ffff:192.0.2.5');
    expect(allowed(limiter, 'x', '192.0.2.5')).toBe(false);
  });
});

describe('addressKey', () => {
  it.each([
    ['192.0.2.5', '192.0.2.5'],
    ['::ffff:192.0.2.5', '192.0.2.5'],
    ['::FFFF:192.0.2.5', '192.0.2.5'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['2001:0db8:0000:0000:0000:0000:0000:0001', '2001:db8:0:0::/64'],
    ['2001:db8:a:b:c:d:e:f', '2001:db8:a:b::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['1::2:3:4:5:1.2.3.4', '1:0:2:3::/64'],
    ['unix-socket', 'unix-socket'],
  ])('%s → %s', (address, key) => {
    expect(addressKey(address)).toBe(key);
  });
});
