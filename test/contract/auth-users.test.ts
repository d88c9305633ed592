// Register, login and listing on every database: case-insensitive uniqueness enforced by the
// database itself, uniform login failures in about the same time, rate limits, no truncation.

import bcrypt from 'bcrypt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DialectName } from '../../compiler/types.js';
import { RestError } from '../../errors/rest-error.js';
import { createPasswordHasher } from '../../runtime/auth/passwords.js';
import { DEFAULT_LOGIN_LIMITS, createLoginRateLimiter } from '../../runtime/auth/rate-limiter.js';
import type { LoginLimits, LoginRateLimiter } from '../../runtime/auth/rate-limiter.js';
import { setupAuth } from '../../runtime/auth/setup.js';
import { authenticateUser, listUsers, registerUser } from '../../runtime/auth/users.js';
import type { DbAdapter, Row } from '../../runtime/db/adapter.js';
import { createAdapter } from '../../runtime/db/create-adapter.js';
import {
  ALL_KINDS,
  closeAndDrop,
  createTestDatabase,
  isAvailable,
  skipReason,
} from '../support/databases.js';
import { TEST_HASHER } from '../support/server.js';
import { serverIt } from '../support/server-only.js';
import type { TestDatabase } from '../support/databases.js';

const NFC_ELISE = '\u00C9lise';
const NFD_ELISE_LOWER = 'e\u0301lise';
// 24 × 'é' (2 bytes) + 6 × '😀' (4 bytes) = 72 bytes; one more 'a' makes 73.
const PASSWORD_72 = 'é'.repeat(24) + '😀'.repeat(6);
const PASSWORD_73 = `${PASSWORD_72}a`;

const hasher = createPasswordHasher();
// TEST_HASHER (the same hashing at cost 4, some 60 times cheaper) where the cost changes nothing of
// what a case proves: names, conflicts, limits. The production hasher writes Alice (whose cost is
// checked; her logins compare at the cost of her hash, whoever serves them) and serves the
// comparison of timings, whose dummy hash must cost what a real one does.
const GENEROUS: LoginLimits = {
  windowSeconds: 60,
  perUsernameAndAddress: 1000,
  perAddress: 1000,
  perUsername: 1000,
};

async function usersInDb(adapter: DbAdapter): Promise<readonly Row[]> {
  const sql = `SELECT id, username, password, is_admin FROM auth_users ORDER BY id`;
  return (await adapter.query({ text: sql, values: [] })).rows;
}

async function failure(promise: Promise<unknown>): Promise<RestError> {
  try {
    await promise;
  } catch (e) {
    if (e instanceof RestError) return e;
    throw e;
  }
  throw new Error('expected a RestError');
}

const median = (xs: readonly number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
};

describe.each(ALL_KINDS)('auth users on %s', (kind: DialectName) => {
  const skip = !isAvailable(kind);

  describe.skipIf(skip)(skip ? (skipReason(kind) ?? '') : 'register, login, list', () => {
    // PGlite's one backend interleaves parallel connections' protocol messages: answers go astray or hang.
    const parallel = serverIt(kind);
    let db: TestDatabase;
    let adapter: DbAdapter;
    let other: DbAdapter;
    const generous = (): LoginRateLimiter => createLoginRateLimiter({ adapter, limits: GENEROUS });

    beforeAll(async () => {
      db = await createTestDatabase(kind);
      adapter = await createAdapter(db.url);
      other = await createAdapter(db.url);
      await setupAuth(adapter, { hasher, dbUrl: db.url });
    });
    afterAll(() => closeAndDrop(db, [other, adapter]));

    it('registers a user and returns id and username, storing a bcrypt hash (cost ≥ 10), never the password', async () => {
      const user = await registerUser(adapter, { username: 'Alice', password: 'correct horse' }, { hasher });
      expect(user).toEqual({ id: expect.any(Number), username: 'Alice' });
      const row = (await usersInDb(adapter)).find((r) => r['id'] === user.id);
      expect(row).toMatchObject({ username: 'Alice', is_admin: false });
      const hash = String(row?.['password']);
      expect(hash).not.toContain('correct horse');
      expect(bcrypt.getRounds(hash)).toBeGreaterThanOrEqual(10);
      expect(await bcrypt.compare('correct horse', hash)).toBe(true);
    });

    it.each(['alice', 'ALICE', 'aLiCe'])(
      'refuses %s once Alice exists: 409 username_taken, nothing written',
      async (name) => {
        const before = await usersInDb(adapter);
        const e = await failure(
          registerUser(adapter, { username: name, password: 'another pass' }, { hasher: TEST_HASHER }),
        );
        expect(e.category).toBe('conflict');
        expect(e.code).toBe('username_taken');
        expect(await usersInDb(adapter)).toEqual(before);
      },
    );

    it('treats Élise, élise (NFD) and ÉLISE as one user, but Elise as another', async () => {
      const elise = await registerUser(
        adapter,
        { username: NFC_ELISE, password: 'password1' },
        { hasher: TEST_HASHER },
      );
      expect(elise.username).toBe(NFC_ELISE);
      for (const name of [NFD_ELISE_LOWER, '\u00E9lise', 'E\u0301LISE', '\u00C9LISE']) {
        expect(
          (
            await failure(
              registerUser(adapter, { username: name, password: 'password1' }, { hasher: TEST_HASHER }),
            )
          ).code,
        ).toBe('username_taken');
      }
      const plain = await registerUser(
        adapter,
        { username: 'Elise', password: 'password1' },
        { hasher: TEST_HASHER },
      );
      expect(plain.id).not.toBe(elise.id);
    });

    it('treats Straße and STRASSE as one user (full case folding)', async () => {
      await registerUser(adapter, { username: 'Straße', password: 'password1' }, { hasher: TEST_HASHER });
      expect(
        (
          await failure(
            registerUser(adapter, { username: 'STRASSE', password: 'password1' }, { hasher: TEST_HASHER }),
          )
        ).code,
      ).toBe('username_taken');
    });

    it('stores 32-character names of 4-byte and of decomposed characters (32 after NFC) in varchar(32)', async () => {
      const emoji = await registerUser(
        adapter,
        { username: '😀'.repeat(32), password: 'password1' },
        { hasher: TEST_HASHER },
      );
      expect(emoji.username).toBe('😀'.repeat(32));
      const decomposed = await registerUser(
        adapter,
        { username: 'e\u0301'.repeat(32), password: 'password1' },
        { hasher: TEST_HASHER },
      );
      expect(decomposed.username).toBe('\u00E9'.repeat(32));
      const stored = (await usersInDb(adapter)).filter(
        (r) => r['id'] === emoji.id || r['id'] === decomposed.id,
      );
      expect(stored.map((r) => r['username'])).toEqual(['😀'.repeat(32), '\u00E9'.repeat(32)]);
    });

    it('keeps names differing by a trailing space apart from PAD SPACE collations by refusing the space', async () => {
      await registerUser(adapter, { username: 'carol', password: 'password1' }, { hasher: TEST_HASHER });
      expect(
        (
          await failure(
            registerUser(adapter, { username: 'carol ', password: 'password1' }, { hasher: TEST_HASHER }),
          )
        ).code,
      ).toBe('invalid_username');
    });

    // On PGlite the two connections share one backend, so one's failed transaction aborts the other's.
    const racing =
      'lets exactly one of concurrent registers of Bob, bob, BOB, bOB, boB win (two connections)';
    serverIt(kind)(racing, async () => {
      const names = ['Bob', 'bob', 'BOB', 'bOB', 'boB'];
      const results = await Promise.allSettled(
        names.map((username, i) =>
          registerUser(
            i % 2 === 0 ? adapter : other,
            { username, password: 'password1' },
            { hasher: TEST_HASHER },
          ),
        ),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const reasons = results.flatMap((r) => (r.status === 'rejected' ? [(r.reason as RestError).code] : []));
      expect(reasons).toEqual(Array(4).fill('username_taken'));
      const bobs = (await usersInDb(adapter)).filter((r) => String(r['username']).toLowerCase() === 'bob');
      expect(bobs).toHaveLength(1);
    });

    it('registers an admin when asked (the CLI path) and lists users without hashes', async () => {
      await registerUser(
        adapter,
        { username: 'root2', password: 'password1', is_admin: true },
        { hasher: TEST_HASHER },
      );
      const users = await listUsers(adapter);
      expect(users[0]).toEqual({ id: expect.any(Number), username: 'admin', is_admin: true });
      expect(users.find((u) => u.username === 'root2')?.is_admin).toBe(true);
      expect(users.find((u) => u.username === 'Alice')?.is_admin).toBe(false);
      for (const user of users) expect(Object.keys(user).sort()).toEqual(['id', 'is_admin', 'username']);
    });

    it('refuses invalid input before writing anything', async () => {
      const before = await usersInDb(adapter);
      expect(
        (
          await failure(
            registerUser(adapter, { username: 'dave', password: 'short' }, { hasher: TEST_HASHER }),
          )
        ).code,
      ).toBe('invalid_password');
      expect(
        (
          await failure(
            registerUser(adapter, { username: 'dave', password: PASSWORD_73 }, { hasher: TEST_HASHER }),
          )
        ).code,
      ).toBe('invalid_password');
      expect(
        (
          await failure(
            registerUser(adapter, { username: 'da\u200Bve', password: 'password1' }, { hasher: TEST_HASHER }),
          )
        ).code,
      ).toBe('invalid_username');
      expect(await usersInDb(adapter)).toEqual(before);
    });

    it('logs in with the right password (any case of the username) and returns the user without hash', async () => {
      const user = await authenticateUser(
        adapter,
        { username: 'ALICE', password: 'correct horse' },
        { limiter: generous(), clientAddress: '192.0.2.1', hasher },
      );
      // The stamp sessions are bound to (a digest of hash and is_admin), never the hash itself.
      expect(user).toEqual({
        id: expect.any(Number),
        username: 'Alice',
        is_admin: false,
        stamp: expect.any(String),
      });
      expect(JSON.stringify(user)).not.toContain('$2');
    });

    it('answers the same 401 invalid_credentials for a wrong password and an unknown user', async () => {
      const options = { limiter: generous(), clientAddress: '192.0.2.1', hasher };
      const wrong = await failure(
        authenticateUser(adapter, { username: 'Alice', password: 'wrong horse' }, options),
      );
      const unknown = await failure(
        authenticateUser(adapter, { username: 'nobody', password: 'wrong horse' }, options),
      );
      const invalidName = await failure(
        authenticateUser(adapter, { username: ' bad\u202E', password: 'wrong horse' }, options),
      );
      for (const e of [wrong, unknown, invalidName]) {
        expect(e.status).toBe(401);
        expect(e.toBody()).toEqual({
          error: { code: 'invalid_credentials', message: 'invalid username or password' },
        });
        expect(e.headers).toEqual(wrong.headers);
      }
    });

    it('does not truncate: a 73-byte password fails although its first 72 bytes are the password', async () => {
      await registerUser(adapter, { username: 'multibyte', password: PASSWORD_72 }, { hasher: TEST_HASHER });
      const options = { limiter: generous(), clientAddress: '192.0.2.1', hasher: TEST_HASHER };
      expect(
        (await authenticateUser(adapter, { username: 'multibyte', password: PASSWORD_72 }, options)).username,
      ).toBe('multibyte');
      expect(
        (await failure(authenticateUser(adapter, { username: 'multibyte', password: PASSWORD_73 }, options)))
          .code,
      ).toBe('invalid_credentials');
    });

    it('never refuses a correct password because of failures from other addresses: 429 only where they came from', async () => {
      const limiter = createLoginRateLimiter({ adapter, limits: DEFAULT_LOGIN_LIMITS });
      for (let i = 0; i < 5; i++) {
        await failure(
          authenticateUser(
            adapter,
            { username: 'carol', password: 'wrong pass' },
            { limiter, clientAddress: '198.51.100.7', hasher: TEST_HASHER },
          ),
        );
      }
      const e = await failure(
        authenticateUser(
          adapter,
          { username: 'CAROL', password: 'password1' },
          { limiter, clientAddress: '198.51.100.7', hasher: TEST_HASHER },
        ),
      );
      expect(e.status).toBe(429);
      expect(e.code).toBe('too_many_attempts');
      expect(Number(e.headers['Retry-After'])).toBeGreaterThan(0);
      const owner = await authenticateUser(
        adapter,
        { username: 'carol', password: 'password1' },
        { limiter, clientAddress: '203.0.113.50', hasher: TEST_HASHER },
      );
      expect(owner.username).toBe('carol');
    });

    const parallelFailures =
      'counts parallel wrong guesses while their passwords are compared: 10 at once from one address → 5 × 401, 5 × 429';
    parallel(parallelFailures, async () => {
      const limiter = createLoginRateLimiter({ adapter, limits: DEFAULT_LOGIN_LIMITS });
      const results = await Promise.allSettled(
        Array.from({ length: 10 }, (_, i) =>
          authenticateUser(
            adapter,
            { username: 'Alice', password: `guess-${i}xx` },
            { limiter, clientAddress: '198.51.100.8', hasher },
          ),
        ),
      );
      const codes = results
        .map((r) => (r.status === 'rejected' ? (r.reason as RestError).code : 'ok'))
        .sort();
      expect(codes).toEqual([...Array(5).fill('invalid_credentials'), ...Array(5).fill('too_many_attempts')]);
    });

    parallel('never counts correct logins: 10 at once from one address all succeed', async () => {
      const limiter = createLoginRateLimiter({ adapter, limits: DEFAULT_LOGIN_LIMITS });
      const results = await Promise.all(
        Array.from({ length: 10 }, () =>
          authenticateUser(
            adapter,
            { username: 'Alice', password: 'correct horse' },
            { limiter, clientAddress: '198.51.100.9', hasher },
          ),
        ),
      );
      expect(results.map((u) => u.username)).toEqual(Array(10).fill('Alice'));
    });

    it('rate-limits failures per client address across usernames', async () => {
      const limiter = createLoginRateLimiter({ adapter, limits: { ...DEFAULT_LOGIN_LIMITS, perAddress: 4 } });
      for (let i = 0; i < 4; i++) {
        await failure(
          authenticateUser(
            adapter,
            { username: `ghost${i}`, password: 'wrong pass' },
            { limiter, clientAddress: '203.0.113.9', hasher: TEST_HASHER },
          ),
        );
      }
      const e = await failure(
        authenticateUser(
          adapter,
          { username: 'Alice', password: 'correct horse' },
          { limiter, clientAddress: '203.0.113.9', hasher: TEST_HASHER },
        ),
      );
      expect(e.code).toBe('too_many_attempts');
      expect(
        (
          await authenticateUser(
            adapter,
            { username: 'Alice', password: 'correct horse' },
            { limiter, clientAddress: '203.0.113.10', hasher: TEST_HASHER },
          )
        ).username,
      ).toBe('Alice');
    });

    it('takes about the same time for an unknown user as for a wrong password (medians within 2×)', async () => {
      const options = { limiter: generous(), clientAddress: '192.0.2.7', hasher };
      const time = async (username: string): Promise<number> => {
        const start = performance.now();
        await failure(authenticateUser(adapter, { username, password: 'not the password' }, options));
        return performance.now() - start;
      };
      await time('Alice');
      await time('nobody-at-all');
      const wrong: number[] = [];
      const unknown: number[] = [];
      for (let i = 0; i < 7; i++) {
        wrong.push(await time('Alice'));
        unknown.push(await time(`nobody-${i}`));
      }
      const ratio = median(unknown) / median(wrong);
      expect(ratio).toBeGreaterThan(0.5);
      expect(ratio).toBeLessThan(2);
    });
  });
});
