// Limits failed logins per username and per client address (sliding window, bounded memory);
// over the limit → 429 `too_many_attempts` with Retry-After.

import { isIPv6 } from 'node:net';
import { RestError } from '../../errors/rest-error.js';

export interface RateLimit {
  /** Failures allowed inside the window; the next attempt is refused. */
  readonly maxFailures: number;
  readonly windowSeconds: number;
}

export interface RateLimiterOptions {
  readonly perUsername?: RateLimit;
  readonly perAddress?: RateLimit;
  /** Keys remembered per kind; beyond it the stalest are forgotten. */
  readonly maxKeys?: number;
  /** Milliseconds since the epoch. */
  readonly clock?: () => number;
}

/**
 * One login attempt, counted as a failure from its start so that parallel attempts cannot all
 * pass the check while their passwords are being compared.
 */
export interface LoginAttempt {
  /** The password matched: the attempt is uncounted and the username's failures are cleared. */
  succeeded(): void;
  /** The attempt ended for another reason than the credentials (e.g. the database): uncounted. */
  abandoned(): void;
}

export interface LoginRateLimiter {
  /** Starts an attempt; throws 429 `too_many_attempts` when the username or the address is over its limit. */
  begin(usernameKey: string, clientAddress: string): LoginAttempt;
}

export const DEFAULT_USERNAME_LIMIT: RateLimit = Object.freeze({ maxFailures: 5, windowSeconds: 15 * 60 });
export const DEFAULT_ADDRESS_LIMIT: RateLimit = Object.freeze({ maxFailures: 20, windowSeconds: 15 * 60 });
export const DEFAULT_MAX_KEYS = 10_000;
/** Usernames are keyed on at most this many characters, so a key's size is bounded too. */
const MAX_KEY_LENGTH = 128;

/** One limit: failure times (ms) per key, at most `maxFailures` each, least recently failed first. */
class FailureWindow {
  readonly #failures = new Map<string, number[]>();
  readonly #limit: RateLimit;
  readonly #maxKeys: number;

  constructor(limit: RateLimit, maxKeys: number) {
    this.#limit = limit;
    this.#maxKeys = maxKeys;
  }

  #recent(key: string, now: number): number[] {
    const since = now - this.#limit.windowSeconds * 1000;
    const times = (this.#failures.get(key) ?? []).filter((t) => t > since);
    if (times.length === 0) this.#failures.delete(key);
    return times;
  }

  /** Seconds until the next attempt is allowed, or 0 when it is allowed now. */
  retryAfter(key: string, now: number): number {
    const times = this.#recent(key, now);
    if (times.length < this.#limit.maxFailures) return 0;
    const oldest = times[times.length - this.#limit.maxFailures] ?? now;
    return Math.max(1, Math.ceil((oldest + this.#limit.windowSeconds * 1000 - now) / 1000));
  }

  record(key: string, now: number): void {
    const times = [...this.#recent(key, now), now];
    this.#failures.delete(key);
    this.#failures.set(key, times);
    // Keys are ordered by their last failure, so the first one is the stalest (and expired
    // ones come first): forgetting it is both "expired first" and least recently used.
    if (this.#failures.size > this.#maxKeys) {
      const stalest = this.#failures.keys().next();
      if (stalest.done !== true) this.#failures.delete(stalest.value);
    }
  }

  /** Forgets the failure recorded at `at`, if it is still there. */
  forget(key: string, at: number): void {
    const times = this.#failures.get(key);
    const index = times?.lastIndexOf(at) ?? -1;
    if (times === undefined || index < 0) return;
    times.splice(index, 1);
    if (times.length === 0) this.#failures.delete(key);
  }

  clear(key: string): void {
    this.#failures.delete(key);
  }
}

/**
 * The address a client is counted under: IPv4-mapped IPv6 as plain IPv4, other IPv6
 * addresses by their /64 prefix (one subscriber usually holds a whole /64).
 */
export function addressKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped !== null) return mapped[1] ?? address;
  if (!isIPv6(address)) return address;
  const [head = '', tail = ''] = address.toLowerCase().split('%')[0]?.split('::') ?? [];
  const headGroups = head === '' ? [] : head.split(':');
  const tailGroups = tail === '' ? [] : tail.split(':');
  // An embedded IPv4 tail (`::ffff:0:1.2.3.4`) stands for two groups.
  const width = (gs: readonly string[]): number => gs.reduce((n, g) => n + (g.includes('.') ? 2 : 1), 0);
  const groups = address.includes('::')
    ? [...headGroups, ...Array<string>(8 - width(headGroups) - width(tailGroups)).fill('0'), ...tailGroups]
    : headGroups;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

export function createLoginRateLimiter(options: RateLimiterOptions = {}): LoginRateLimiter {
  const clock = options.clock ?? Date.now;
  const maxKeys = options.maxKeys ?? DEFAULT_MAX_KEYS;
  const byUsername = new FailureWindow(options.perUsername ?? DEFAULT_USERNAME_LIMIT, maxKeys);
  const byAddress = new FailureWindow(options.perAddress ?? DEFAULT_ADDRESS_LIMIT, maxKeys);
  const userKey = (key: string): string => key.slice(0, MAX_KEY_LENGTH);

  return {
    begin(usernameKey, clientAddress) {
      const now = clock();
      const user = userKey(usernameKey);
      const address = addressKey(clientAddress);
      const wait = Math.max(byUsername.retryAfter(user, now), byAddress.retryAfter(address, now));
      if (wait > 0) {
        throw new RestError('rate_limited', 'too_many_attempts', 'too many failed login attempts; try again later', {
          headers: { 'Retry-After': String(wait) },
          details: { retry_after: wait },
        });
      }
      byUsername.record(user, now);
      byAddress.record(address, now);
      let open = true;
      const uncount = (): boolean => {
        if (!open) return false;
        open = false;
        byUsername.forget(user, now);
        byAddress.forget(address, now);
        return true;
      };
      return {
        succeeded: () => {
          if (uncount()) byUsername.clear(user);
        },
        abandoned: () => {
          uncount();
        },
      };
    },
  };
}
