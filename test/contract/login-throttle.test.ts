// The login limits on every database: counters in `auth_login_throttle` shared by limiters on
// separate pools (as separate server processes are), attempts reserved under a row lock so parallel
// guesses cannot all pass, failures only, windows that end, and the upgrade of an older database.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DialectName } from '../../compiler/types.js';
import { RestError } from '../../errors/rest-error.js';
import {
  DEFAULT_LOGIN_LIMITS,
  UNDER_ATTACK_ALLOWANCE,
  STALE_PENDING_MS,
  createLoginRateLimiter,
} from '../../runtime/auth/rate-limiter.js';
import type {
  LoginAttempt,
  LoginLimits,
  LoginRateLimiter,
  LoginSubject,
} from '../../runtime/auth/rate-limiter.js';
import { setupAuth, upgradeAuthTables } from '../../runtime/auth/setup.js';
import type { DbAdapter } from '../../runtime/db/adapter.js';
import { createAdapter } from '../../runtime/db/create-adapter.js';
import {
  ALL_KINDS,
  closeAndDrop,
  createTestDatabase,
  isAvailable,
  skipReason,
} from '../support/databases.js';
import type { TestDatabase } from '../support/databases.js';
import { rollBackToFirstAuthVersion } from '../support/auth-history.js';
import { openRawSql } from '../support/server.js';
import { serverIt } from '../support/server-only.js';

const WINDOW_MS = DEFAULT_LOGIN_LIMITS.windowSeconds * 1000;

async function refusal(promise: Promise<unknown>): Promise<RestError> {
  try {
    await promise;
  } catch (e) {
    if (e instanceof RestError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

/** `n` attempts started together, each judged after `ms` (a password comparison) as `ends`. */
async function burst(
  limiters: readonly LoginRateLimiter[],
  n: number,
  subject: LoginSubject,
  ends: 'failed' | 'succeeded',
  ms = 30,
): Promise<string[]> {
  const results = await Promise.allSettled(
    Array.from({ length: n }, async (_, i) => {
      const attempt = await (limiters[i % limiters.length] as LoginRateLimiter).begin(subject);
      await new Promise((resolve) => setTimeout(resolve, ms));
      await attempt[ends]();
      return ends;
    }),
  );
  return results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as RestError).code)).sort();
}

describe.each(ALL_KINDS)('login throttle on %s', (kind: DialectName) => {
  const skip = !isAvailable(kind);

  describe.skipIf(skip)(skip ? (skipReason(kind) ?? '') : 'two pools on one database', () => {
    // PGlite's one backend interleaves parallel connections' messages: one's error loses the others' (hang).
    const parallel = serverIt(kind);
    let db: TestDatabase;
    let first: DbAdapter;
    let second: DbAdapter;
    let now = Date.now();
    const clock = (): number => now;
    const limiterOn = (adapter: DbAdapter, limits: LoginLimits = DEFAULT_LOGIN_LIMITS, maxWaitMs?: number) =>
      createLoginRateLimiter({ adapter, limits, clock, ...(maxWaitMs === undefined ? {} : { maxWaitMs }) });
    const fail = async (limiter: LoginRateLimiter, subject: LoginSubject): Promise<void> =>
      (await limiter.begin(subject)).failed();

    beforeAll(async () => {
      db = await createTestDatabase(kind);
      first = await createAdapter(db.url);
      second = await createAdapter(db.url);
      await setupAuth(first, { dbUrl: db.url });
    });
    afterAll(() => closeAndDrop(db, [second, first]));

    it('shares failures between limiters on separate pools: 3 + 2 failures → both refuse, with Retry-After', async () => {
      const a = limiterOn(first);
      const b = limiterOn(second);
      const subject = { usernameKey: 'shared', address: '192.0.2.1' };
      for (let i = 0; i < 3; i++) await fail(a, subject);
      for (let i = 0; i < 2; i++) await fail(b, subject);
      for (const limiter of [a, b]) {
        const e = await refusal(limiter.begin(subject));
        expect(e.status).toBe(429);
        expect(e.code).toBe('too_many_attempts');
        expect(e.headers['Retry-After']).toBe(String(DEFAULT_LOGIN_LIMITS.windowSeconds));
      }
    });

    const parallelFailures =
      'lets 5 of 10 parallel wrong guesses through two pools compare, refuses the other 5';
    parallel(parallelFailures, async () => {
      const codes = await burst(
        [limiterOn(first), limiterOn(second)],
        10,
        { usernameKey: 'burst', address: '192.0.2.2' },
        'failed',
      );
      expect(codes).toEqual([
        ...Array<string>(5).fill('failed'),
        ...Array<string>(5).fill('too_many_attempts'),
      ]);
    });

    const parallelSuccesses =
      'never refuses correct logins: 10 parallel through two pools all pass (they wait for each other)';
    parallel(parallelSuccesses, async () => {
      const limiters = [limiterOn(first), limiterOn(second)];
      const subject = { usernameKey: 'popular', address: '192.0.2.3' };
      expect(await burst(limiters, 10, subject, 'succeeded')).toEqual(Array<string>(10).fill('succeeded'));
      expect(await burst(limiters, 30, { address: '192.0.2.3' }, 'succeeded', 5)).toEqual(
        Array<string>(30).fill('succeeded'),
      );
    });

    it('forgets the failures of a username from an address when it logs in there', async () => {
      const limiter = limiterOn(first);
      const subject = { usernameKey: 'forgetful', address: '192.0.2.4' };
      for (let i = 0; i < 4; i++) await fail(limiter, subject);
      await (await limiter.begin(subject)).succeeded();
      for (let i = 0; i < 4; i++) await fail(limiter, subject);
      await (await limiter.begin(subject)).abandoned();
      await fail(limiter, subject);
      expect((await refusal(limiter.begin(subject))).code).toBe('too_many_attempts');
    });

    it('refuses an address after its own limit whatever the usernames, and no other address', async () => {
      const limiter = limiterOn(first, { ...DEFAULT_LOGIN_LIMITS, perAddress: 4 });
      for (let i = 0; i < 4; i++)
        await fail(limiter, { usernameKey: `spray${i}`, address: '2001:db8:7:7::1' });
      // The same /64 is the same address; another /64 is not.
      expect((await refusal(limiter.begin({ usernameKey: 'fresh', address: '2001:db8:7:7::99' }))).code).toBe(
        'too_many_attempts',
      );
      expect((await refusal(limiter.begin({ address: '2001:db8:7:7::2' }))).code).toBe('too_many_attempts');
      await (await limiter.begin({ usernameKey: 'fresh', address: '2001:db8:7:8::1' })).succeeded();
    });

    it('under attack from many addresses: one failure per address, the owner at an address without failures always passes', async () => {
      const attacker = limiterOn(first);
      const owner = limiterOn(second);
      const victim = 'victim';
      // Two addresses spend their 5 failures each: 10 failures, the username is under attack.
      for (const address of ['198.51.100.1', '198.51.100.2']) {
        for (let i = 0; i < 5; i++) await fail(attacker, { usernameKey: victim, address });
      }
      // Under attack an address keeps its own allowance of UNDER_ATTACK_ALLOWANCE failures, no more.
      for (let i = 0; i < UNDER_ATTACK_ALLOWANCE; i++)
        await fail(attacker, { usernameKey: victim, address: '198.51.100.3' });
      const held = await refusal(attacker.begin({ usernameKey: victim, address: '198.51.100.3' }));
      expect(held.code).toBe('too_many_attempts');
      // The owner, who never failed from home, is never refused however the attack goes on.
      for (let round = 0; round < 3; round++) {
        await fail(attacker, { usernameKey: victim, address: `198.51.100.${10 + round}` });
        await (await owner.begin({ usernameKey: victim, address: '203.0.113.1' })).succeeded();
      }
      // The owner mistyped once, at the office, while the attack goes on: never refused for it.
      await fail(owner, { usernameKey: victim, address: '203.0.113.2' });
      await (await owner.begin({ usernameKey: victim, address: '203.0.113.2' })).succeeded();
      // Failing past the allowance from there holds that address back for at most one window.
      for (let i = 0; i < UNDER_ATTACK_ALLOWANCE; i++)
        await fail(owner, { usernameKey: victim, address: '203.0.113.2' });
      const mistyped = await refusal(owner.begin({ usernameKey: victim, address: '203.0.113.2' }));
      expect(Number(mistyped.headers['Retry-After'])).toBeLessThanOrEqual(DEFAULT_LOGIN_LIMITS.windowSeconds);
      now += WINDOW_MS / 2;
      await fail(attacker, { usernameKey: victim, address: '198.51.100.20' });
      now += WINDOW_MS / 2;
      for (let i = 0; i < 10; i++)
        await fail(attacker, { usernameKey: victim, address: `198.51.100.${30 + i}` });
      await (await owner.begin({ usernameKey: victim, address: '203.0.113.2' })).succeeded();
    });

    it('adds no row for a new username once the client address is refused', async () => {
      const limiter = limiterOn(first);
      const address = '192.0.2.77';
      const rows = async (): Promise<number> =>
        Number(
          (
            await first.query({
              text: `SELECT COUNT(*) AS n FROM auth_login_throttle WHERE throttle_key LIKE ${first.dialect.placeholder(1)}`,
              values: [`% ${address}%`],
            })
          ).rows[0]?.['n'],
        );
      for (let i = 0; i < DEFAULT_LOGIN_LIMITS.perAddress; i++)
        await fail(limiter, { usernameKey: `guess${i}`, address });
      const before = await rows();
      expect(before).toBe(DEFAULT_LOGIN_LIMITS.perAddress + 1);
      for (let i = 0; i < 50; i++) {
        const refused = await refusal(limiter.begin({ usernameKey: `new${i}`, address }));
        expect(refused.code).toBe('too_many_attempts');
      }
      expect(await rows()).toBe(before);
    });

    it('counts registrations per client address on a counter of their own', async () => {
      const limiter = limiterOn(first);
      const address = '192.0.2.88';
      for (let i = 0; i < DEFAULT_LOGIN_LIMITS.perAddress; i++)
        await (await limiter.begin({ address, purpose: 'register' })).failed();
      const refused = await refusal(limiter.begin({ address, purpose: 'register' }));
      expect(refused.code).toBe('too_many_attempts');
      expect(Number(refused.headers['Retry-After'])).toBeGreaterThan(0);
      // Logins from that address are not held back by its registrations.
      await (await limiter.begin({ usernameKey: 'someone', address })).succeeded();
    });

    it('ends a window: refused addresses may try again once it is over', async () => {
      const limiter = limiterOn(first);
      const subject = { usernameKey: 'patient', address: '192.0.2.5' };
      for (let i = 0; i < 5; i++) await fail(limiter, subject);
      now += WINDOW_MS - 1000;
      expect((await refusal(limiter.begin(subject))).headers['Retry-After']).toBe('1');
      now += 1000;
      await fail(limiter, subject);
      await (await limiter.begin(subject)).succeeded();
    });

    it('forgets an attempt left pending by a process that died, once it is stale', async () => {
      const strict = { ...DEFAULT_LOGIN_LIMITS, perUsernameAndAddress: 1 };
      const subject = { usernameKey: 'orphan', address: '192.0.2.6' };
      const dead: LoginAttempt = await limiterOn(second, strict).begin(subject);
      expect(dead).toBeDefined();
      // While it is pending, another attempt waits for it; past the wait: 429 Retry-After 1.
      const waited = await refusal(limiterOn(first, strict, 50).begin(subject));
      expect(waited.headers['Retry-After']).toBe('1');
      now += STALE_PENDING_MS;
      await (await limiterOn(first, strict, 50).begin(subject)).succeeded();
    });

    it('unlocks a username: its failures from every address are forgotten', async () => {
      const limiter = limiterOn(first);
      for (const address of ['192.0.2.7', '192.0.2.8']) {
        for (let i = 0; i < 5; i++) await fail(limiter, { usernameKey: 'locked', address });
      }
      expect(await limiter.unlock('locked')).toBe(2);
      await (await limiter.begin({ usernameKey: 'locked', address: '192.0.2.7' })).succeeded();
    });

    it('lockouts() names the usernames begin() refuses from some address, until their windows end', async () => {
      const limiter = limiterOn(first);
      const start = now;
      const lockedUntil = async (key: string) => (await limiterOn(second).lockouts()).lockedUntil(key);
      const hit = { usernameKey: 'lockme', address: '192.0.2.20' };
      for (let i = 0; i < 4; i++) await fail(limiter, hit);
      expect(await lockedUntil('lockme')).toBeUndefined();
      await fail(limiter, hit);
      expect(await lockedUntil('lockme')).toBe(start + WINDOW_MS);
      expect((await refusal(limiter.begin(hit))).code).toBe('too_many_attempts');
      // Under attack (10 failures from all addresses): an address that used up its allowance is refused too.
      const other = { usernameKey: 'spread', address: '192.0.2.21' };
      for (let i = 0; i < 10; i++)
        await fail(limiter, { usernameKey: 'spread', address: `192.0.2.${30 + i}` });
      for (let i = 0; i < UNDER_ATTACK_ALLOWANCE - 1; i++) await fail(limiter, other);
      expect(await lockedUntil('spread')).toBeUndefined();
      await fail(limiter, other);
      expect(await lockedUntil('spread')).toBe(start + WINDOW_MS);
      expect((await refusal(limiter.begin(other))).code).toBe('too_many_attempts');
      await (await limiter.begin({ usernameKey: 'spread', address: '192.0.2.99' })).succeeded();
      expect(await lockedUntil('someone else')).toBeUndefined();
      const later = await createLoginRateLimiter({
        adapter: second,
        clock: () => start + WINDOW_MS,
      }).lockouts();
      expect(later.lockedUntil('lockme')).toBeUndefined();
      expect(later.lockedUntil('spread')).toBeUndefined();
    });

    it('deletes rows untouched for a whole window, in the background', async () => {
      const sql = await openRawSql(db);
      try {
        const limiter = createLoginRateLimiter({ adapter: first, clock, sweepIntervalMs: 0 });
        await fail(limiter, { usernameKey: 'old', address: '192.0.2.9' });
        now += WINDOW_MS + 1;
        await (await limiter.begin({ usernameKey: 'new', address: '192.0.2.10' })).succeeded();
        await limiter.close();
        const keys = (await sql.rows('SELECT throttle_key FROM auth_login_throttle')).map((r) =>
          Buffer.isBuffer(r['throttle_key']) ? r['throttle_key'].toString() : String(r['throttle_key']),
        );
        expect(keys.sort()).toEqual(['a 192.0.2.10', 'u 192.0.2.10 new']);
      } finally {
        await sql.close();
      }
    });

    // Two upgrades at once: on PGlite's one backend both connections hold the migrations' advisory lock.
    serverIt(kind)('upgrades a database set up before the throttle existed, keeping its rows', async () => {
      const sql = await openRawSql(db);
      try {
        await rollBackToFirstAuthVersion(sql, kind);
        const users = await sql.rows('SELECT id, username FROM auth_users ORDER BY id');
        await expect(limiterOn(first).begin({ address: '192.0.2.11' })).rejects.toThrow();
        await Promise.all([
          upgradeAuthTables(first, { dbUrl: db.url }),
          upgradeAuthTables(second, { dbUrl: db.url }),
        ]);
        expect(await sql.rows('SELECT id, username FROM auth_users ORDER BY id')).toEqual(users);
        expect(await sql.count('auth_policies')).toBe(3);
        await (await limiterOn(first).begin({ usernameKey: 'admin', address: '192.0.2.11' })).succeeded();
      } finally {
        await sql.close();
      }
    });
  });
});
