// Password rules of docs/authentication.md and bcrypt hashing on libuv's thread pool, with a dummy hash so
// an unknown user costs the same time as a wrong password.

import { randomBytes } from 'node:crypto';
import bcrypt from 'bcrypt';
import { RestError } from '../../errors/rest-error.js';

export const PASSWORD_MIN_BYTES = 8;
/** bcrypt reads at most 72 bytes; longer passwords are refused, never truncated. */
export const PASSWORD_MAX_BYTES = 72;
export const MIN_BCRYPT_COST = 10;
export const DEFAULT_BCRYPT_COST = 10;

type Reason = 'type' | 'length' | 'nul' | 'surrogate';

const messages: Readonly<Record<Reason, string>> = {
  type: 'password must be a string',
  length: `password must be ${PASSWORD_MIN_BYTES} to ${PASSWORD_MAX_BYTES} bytes long in UTF-8`,
  nul: 'password must not contain the NUL character',
  surrogate: 'password must be valid Unicode text',
};

// With the `u` flag a lone surrogate is one code point of category Cs; it would be encoded
// as U+FFFD, so two different passwords would hash alike.
const LONE_SURROGATE = /\p{Cs}/u;
const BCRYPT_HASH = /^\$2[aby]\$(\d\d)\$[./A-Za-z0-9]{53}$/;

function passwordProblem(password: unknown): Reason | undefined {
  if (typeof password !== 'string') return 'type';
  if (password.includes('\0')) return 'nul';
  if (LONE_SURROGATE.test(password)) return 'surrogate';
  const bytes = Buffer.byteLength(password, 'utf8');
  if (bytes < PASSWORD_MIN_BYTES || bytes > PASSWORD_MAX_BYTES) return 'length';
  return undefined;
}

/** True when `password` satisfies every rule (used at login, where a bad one simply fails). */
export const isValidPassword = (password: unknown): password is string =>
  passwordProblem(password) === undefined;

/** Throws 400 `invalid_password` naming the broken rule. */
export function validatePassword(password: unknown): string {
  const reason = passwordProblem(password);
  if (reason === undefined) return password as string;
  throw new RestError('invalid_password', messages[reason], {
    details: { field: 'password', reason },
  });
}

/** A random password for setup's admin and `auth user passwd` without one: 24 base64url characters, 144 bits. */
export const generatePassword = (): string => randomBytes(18).toString('base64url');

/** The cost of a well-formed bcrypt hash, or undefined when `value` is not one. */
export function bcryptCost(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const m = BCRYPT_HASH.exec(value);
  return m === null ? undefined : Number(m[1]);
}

export interface PasswordHasher {
  readonly cost: number;
  /** Validates, then hashes with bcrypt's async API (off the event loop). */
  hashPassword(password: string): Promise<string>;
  /**
   * Compares `password` with `hash`; with `hash` null (unknown user), a malformed hash or an
   * invalid password it still runs one bcrypt comparison against the dummy hash and answers
   * false, so every failure costs about the same time.
   */
  verifyPassword(password: string, hash: string | null): Promise<boolean>;
}

/**
 * The hash an unknown user's password is compared with, so that the failure costs one bcrypt
 * comparison as a wrong password does: its result is thrown away, so nobody needs to be unable to
 * guess what it hashes. At the production cost it is this constant (a hash of 32 random bytes that
 * were not kept), so no process spends a bcrypt hash on it at start; at another cost it is hashed
 * once per process and shared by every hasher.
 */
const DUMMY_HASH = '$2b$10$Q7PDQyNf8NHgiCWmGvcVEuddSozJg1bJ4BwYbI8pig.Ri.CKcE/ai';
const dummyHashes = new Map<number, Promise<string>>();
// Keyed by the cost written in the hash itself: should the default cost change, hashers at the new
// cost hash a dummy of their own rather than compare at the old one.
dummyHashes.set(Number(bcryptCost(DUMMY_HASH)), Promise.resolve(DUMMY_HASH));

function dummyHashOf(cost: number): Promise<string> {
  let dummy = dummyHashes.get(cost);
  if (dummy === undefined) {
    dummy = bcrypt.hash(randomBytes(32).toString('base64'), cost);
    dummy.catch(() => dummyHashes.delete(cost));
    dummyHashes.set(cost, dummy);
  }
  return dummy;
}

export function createPasswordHasher(options: { readonly cost?: number } = {}): PasswordHasher {
  const cost = options.cost ?? DEFAULT_BCRYPT_COST;
  if (!Number.isInteger(cost) || cost < MIN_BCRYPT_COST || cost > 31) {
    throw new RestError('weak_bcrypt_cost', `bcrypt cost must be an integer from ${MIN_BCRYPT_COST} to 31`);
  }
  return bcryptHasher(cost);
}

/**
 * The hasher of createPasswordHasher at any cost bcrypt takes (4–31), without the floor: rest
 * itself always hashes through createPasswordHasher. Tests that only need a working password (not
 * its cost) serve with a cost-4 one (StartOptions.hasher), which hashes some 60 times faster.
 */
export function bcryptHasher(cost: number): PasswordHasher {
  // Computed at once (in the thread pool) so that the first unknown user does not pay for it.
  const dummyHash = dummyHashOf(cost);

  return {
    cost,
    hashPassword: async (password) => bcrypt.hash(validatePassword(password), cost),
    verifyPassword: async (password, hash) => {
      if (hash !== null && bcryptCost(hash) !== undefined && isValidPassword(password)) {
        return bcrypt.compare(password, hash);
      }
      await bcrypt.compare(typeof password === 'string' ? password : '', await dummyHash);
      return false;
    },
  };
}
