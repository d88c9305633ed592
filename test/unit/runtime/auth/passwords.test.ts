import bcrypt from 'bcrypt';
import { describe, expect, it } from 'vitest';
import { RestError } from '../../../../errors/rest-error.js';
import {
  bcryptCost,
  createPasswordHasher,
  isValidPassword,
  validatePassword,
} from '../../../../runtime/auth/passwords.js';

// 24 × 'é' (2 bytes) = 48 bytes; + 6 × '😀' (4 bytes) = 72 bytes; one more 'a' = 73 bytes.
const MULTIBYTE_72 = 'é'.repeat(24) + '😀'.repeat(6);
const MULTIBYTE_73 = `${MULTIBYTE_72}a`;

const hasher = createPasswordHasher();

function rejection(input: unknown): RestError {
  try {
    validatePassword(input);
  } catch (e) {
    if (e instanceof RestError) return e;
    throw e;
  }
  throw new Error(`accepted ${JSON.stringify(input)}`);
}

describe('validatePassword', () => {
  it.each([
    ['8 ASCII bytes', 'abcdefgh'],
    ['72 ASCII bytes', 'a'.repeat(72)],
    ['72 bytes of multi-byte characters', MULTIBYTE_72],
    ['4 two-byte characters (8 bytes)', 'éééé'],
    ['two emoji (8 bytes)', '😀😀'],
    ['spaces at the ends', '  secret  '],
  ])('accepts %s', (_label, password) => {
    expect(Buffer.byteLength(password)).toBeGreaterThanOrEqual(8);
    expect(validatePassword(password)).toBe(password);
    expect(isValidPassword(password)).toBe(true);
  });

  it.each([
    ['7 ASCII bytes', 'abcdefg', 'length'],
    ['empty', '', 'length'],
    ['73 ASCII bytes', 'a'.repeat(73), 'length'],
    ['73 bytes of multi-byte characters (30 characters)', MULTIBYTE_73, 'length'],
    ['3 two-byte characters (6 bytes)', 'ééé', 'length'],
    ['19 emoji (76 bytes, 38 UTF-16 units)', '😀'.repeat(19), 'length'],
    ['a NUL inside', 'abcd\0efgh', 'nul'],
    ['a NUL at the end', 'abcdefgh\0', 'nul'],
    ['a lone surrogate', 'abcdefgh\uD800', 'surrogate'],
    ['a number', 12345678, 'type'],
    ['null', null, 'type'],
  ])('rejects %s', (_label, password, reason) => {
    const e = rejection(password);
    expect(e.code).toBe('invalid_password');
    expect(e.category).toBe('invalid_input');
    expect(e.details).toEqual({ field: 'password', reason });
    expect(isValidPassword(password)).toBe(false);
  });

  it('never puts the password in the error', () => {
    const e = rejection('short');
    expect(JSON.stringify(e.toBody())).not.toContain('short');
  });
});

describe('createPasswordHasher', () => {
  it('refuses a bcrypt cost under 10', () => {
    expect(() => createPasswordHasher({ cost: 9 })).toThrow(RestError);
  });

  it('hashes with bcrypt at cost 10 or more, and the hash verifies', async () => {
    const hash = await hasher.hashPassword('correct horse');
    expect(hash).toMatch(/^\$2b\$10\$/);
    expect(bcrypt.getRounds(hash)).toBeGreaterThanOrEqual(10);
    expect(bcryptCost(hash)).toBe(10);
    expect(await hasher.verifyPassword('correct horse', hash)).toBe(true);
    expect(await hasher.verifyPassword('correct horsf', hash)).toBe(false);
  });

  it('refuses to hash an invalid password', async () => {
    await expect(hasher.hashPassword('a'.repeat(73))).rejects.toMatchObject({ code: 'invalid_password' });
  });

  it('does not truncate: a 73-byte password fails even when its first 72 bytes are the password', async () => {
    const hash = await hasher.hashPassword(MULTIBYTE_72);
    expect(await hasher.verifyPassword(MULTIBYTE_72, hash)).toBe(true);
    expect(await hasher.verifyPassword(MULTIBYTE_73, hash)).toBe(false);
    // bcrypt alone would accept it: the check is ours.
    expect(await bcrypt.compare(MULTIBYTE_73, hash)).toBe(true);
  });

  it('answers false for an unknown user (null hash) and for a stored value that is not a bcrypt hash', async () => {
    expect(await hasher.verifyPassword('whatever1', null)).toBe(false);
    expect(await hasher.verifyPassword('plaintext', 'plaintext')).toBe(false);
  });

  it('spends a bcrypt comparison on an unknown user', async () => {
    const hash = await hasher.hashPassword('correct horse');
    const time = async (fn: () => Promise<unknown>): Promise<number> => {
      const start = performance.now();
      await fn();
      return performance.now() - start;
    };
    await hasher.verifyPassword('warm up!', null);
    // The fastest of three interleaved samples each: a busy machine only ever adds time, and one
    // sample of each swung 4× under CI's load. Without the dummy comparison `unknown` is ~0 ms.
    const wrong: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 3; i += 1) {
      wrong.push(await time(() => hasher.verifyPassword('wrong password', hash)));
      unknown.push(await time(() => hasher.verifyPassword('wrong password', null)));
    }
    expect(Math.min(...unknown)).toBeGreaterThan(Math.min(...wrong) / 3);
  });

  it('runs off the event loop: timers keep firing while hashing', async () => {
    let ticks = 0;
    const timer = setInterval(() => (ticks += 1), 1);
    await Promise.all([hasher.hashPassword('abcdefgh1'), hasher.hashPassword('abcdefgh2')]);
    clearInterval(timer);
    expect(ticks).toBeGreaterThan(5);
  });
});

describe('bcryptCost', () => {
  it.each([
    ['$2b$12$' + 'a'.repeat(53), 12],
    ['$2a$10$' + 'a'.repeat(53), 10],
    ['$2b$12$' + 'a'.repeat(52), undefined],
    ['plain', undefined],
    [42, undefined],
  ])('%j → %j', (value, cost) => {
    expect(bcryptCost(value)).toBe(cost);
  });
});
