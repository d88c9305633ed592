// Login throttling (docs/authentication.md), shared by every server process on one database through the
// `auth_login_throttle` table (sql/003_login_throttle.sql): failures only, per (username, client
// address) and per client address; a username failing from many addresses gives each address that
// already failed for it one failure per window, and never refuses an address that has not.
// Over a limit → 429 `too_many_attempts` with Retry-After.

import { isIPv6 } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { SqlBuilder, renderSql } from '../../compiler/sql/fragment.js';
import type { RenderedSql } from '../../compiler/sql/fragment.js';
import { RestError, isRestError } from '../../errors/rest-error.js';
import type { DbAdapter, DbSession, Row } from '../db/adapter.js';
import type { Logger } from '../logger.js';
import { LOGIN_THROTTLE_TABLE } from './auth-ddl.js';

export interface LoginLimits {
  /** Failures older than this are forgotten. */
  readonly windowSeconds: number;
  /** Failures of one username from one client address; then that address is refused for it. */
  readonly perUsernameAndAddress: number;
  /** Failures from one client address, whatever the usernames; then the address is refused. */
  readonly perAddress: number;
  /**
   * Failures of one username from all addresses after which an address that already failed for it
   * in its window is refused (one guess per address); an address without a failure never is.
   */
  readonly perUsername: number;
}

export const DEFAULT_LOGIN_LIMITS: LoginLimits = Object.freeze({
  windowSeconds: 15 * 60,
  perUsernameAndAddress: 5,
  perAddress: 20,
  perUsername: 10,
});

/** An attempt still pending after this long belongs to a process that died: it no longer counts. */
export const STALE_PENDING_MS = 60_000;
/** Longest an attempt waits for attempts in flight to end before it is refused. */
export const DEFAULT_MAX_WAIT_MS = 10_000;
/** Rows untouched for a whole window are deleted at most this often, by each process. */
export const DEFAULT_SWEEP_INTERVAL_MS = 60_000;
/** Usernames are keyed on at most this many code points, so a key's size is bounded too. */
const MAX_USERNAME_KEY_CODE_POINTS = 64;
const SWEEP_BATCH = 500;

export interface LoginSubject {
  /** The username's uniqueness key; absent for an attempt not tied to a username. */
  readonly usernameKey?: string;
  /** The client's address as the server sees it (runtime/http/client-address.ts). */
  readonly address: string;
  /**
   * `register`: a registration, counted per client address on a counter of its own with the
   * window and limit of failed logins from one address (`perAddress`). Default `login`.
   */
  readonly purpose?: 'login' | 'register';
}

/** One reserved attempt; exactly one of its methods is called when the credentials are judged. */
export interface LoginAttempt {
  /** Wrong credentials: counted as one failure. */
  failed(): Promise<void>;
  /** Right credentials: uncounted, and the username's failures from this address are forgotten. */
  succeeded(): Promise<void>;
  /** Ended for another reason than the credentials (e.g. the database): uncounted. */
  abandoned(): Promise<void>;
}

export interface LoginRateLimiter {
  /**
   * Reserves an attempt before the password is compared. Throws 429 `too_many_attempts` when the
   * failures alone reach a limit; while attempts in flight fill what is left of one, waits until
   * they end (at most `maxWaitMs`), so parallel wrong guesses cannot all pass the check and
   * parallel correct logins are never refused. `/auth/login` uses it; any endpoint that checks a
   * password or a secret can count its failures the same way.
   */
  begin(subject: LoginSubject): Promise<LoginAttempt>;
  /**
   * Forgets every failure of a username, from every address; returns the rows cleared. Runs in
   * `session` when given (the caller's transaction), else on its own.
   */
  unlock(usernameKey: string, session?: DbSession): Promise<number>;
  /** Which usernames some client address is refused for now (`auth user list`). */
  lockouts(): Promise<LoginLockouts>;
  /** Waits for a background sweep to end (call before closing the adapter). */
  close(): Promise<void>;
}

/** The usernames locked out of at least one client address, as judged at one moment. */
export interface LoginLockouts {
  /** When the last refusal for this username key ends (ms since the epoch); undefined: not locked. */
  lockedUntil(usernameKey: string): number | undefined;
}

/**
 * One throttled password check (a login, a password change): reserves the attempt (429 when over a
 * limit), runs `check`, counts a `false` as a failure and throws `refused()`, abandons the attempt
 * when `check` throws. Resolves with the attempt of a passed check: the caller settles it
 * (`succeeded()`, or `abandoned()` when what follows fails).
 */
export async function throttledCheck(
  limiter: LoginRateLimiter,
  subject: LoginSubject,
  check: () => Promise<boolean>,
  refused: () => Error,
): Promise<LoginAttempt> {
  const attempt = await limiter.begin(subject);
  let passed: boolean;
  try {
    passed = await check();
  } catch (e) {
    await attempt.abandoned();
    throw e;
  }
  if (!passed) {
    await attempt.failed();
    throw refused();
  }
  return attempt;
}

export interface RateLimiterOptions {
  readonly adapter: DbAdapter;
  readonly limits?: LoginLimits;
  /** Milliseconds since the epoch; every process on a database should agree on it. */
  readonly clock?: () => number;
  readonly logger?: Logger;
  readonly maxWaitMs?: number;
  readonly sweepIntervalMs?: number;
}

/** What one row says at `now`: failures of its window and attempts in flight that still count. */
export interface ThrottleState {
  readonly windowStart: number;
  readonly failures: number;
  readonly pending: number;
  readonly pendingSince: number;
}

export type Verdict =
  | { readonly kind: 'go' }
  | { readonly kind: 'wait' }
  | { readonly kind: 'refuse'; readonly retryAfter: number };

/** Failures and pending attempts of `state` that still count at `now`. */
export function liveCounts(
  state: ThrottleState,
  now: number,
  windowMs: number,
): { readonly failures: number; readonly pending: number } {
  return {
    failures: state.windowStart > now - windowMs ? state.failures : 0,
    pending: state.pendingSince > now - STALE_PENDING_MS ? state.pending : 0,
  };
}

/**
 * Refuse when failures alone reach a limit (Retry-After: until the longest such window ends);
 * wait when failures and attempts in flight together do; otherwise go.
 */
export function judge(
  checks: ReadonlyArray<{ readonly state: ThrottleState; readonly limit: number }>,
  now: number,
  windowMs: number,
): Verdict {
  let retryAfter = 0;
  let full = false;
  for (const { state, limit } of checks) {
    const { failures, pending } = liveCounts(state, now, windowMs);
    if (failures >= limit) {
      // A concurrent attempt that read its clock after `now` may have started the window, so
      // what is left of it is capped at the window's length.
      const left = Math.min(windowMs, state.windowStart + windowMs - now);
      retryAfter = Math.max(retryAfter, Math.max(1, Math.ceil(left / 1000)));
    } else if (failures + pending >= limit) full = true;
  }
  if (retryAfter > 0) return { kind: 'refuse', retryAfter };
  return full ? { kind: 'wait' } : { kind: 'go' };
}

/**
 * Failures one client address keeps for a username that is under attack (failed `perUsername`
 * times from all addresses): an owner's typo or two never lock the owner out.
 */
export const UNDER_ATTACK_ALLOWANCE = 3;

/**
 * The limit of a (username, client address) row: `perUsernameAndAddress`, or UNDER_ATTACK_ALLOWANCE
 * once the username has failed `perUsername` times from all addresses — only for an address that
 * already failed for it (`failedHere`). So the per-username limit never refuses an address that
 * has not itself failed more than its own allowance, whatever other addresses did.
 */
export function usernameScopeLimit(
  limits: LoginLimits,
  failedHere: boolean,
  usernameFailures: number,
): number {
  return failedHere && usernameFailures >= limits.perUsername
    ? Math.min(UNDER_ATTACK_ALLOWANCE, limits.perUsernameAndAddress)
    : limits.perUsernameAndAddress;
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

const usernameKeyOf = (key: string): string =>
  Array.from(key).slice(0, MAX_USERNAME_KEY_CODE_POINTS).join('');

/** One row of the table: a client address (`usernameKey` null) or a username from an address. */
interface Scope {
  readonly key: string;
  readonly usernameKey: string | null;
}

function scopesOf(subject: LoginSubject): readonly Scope[] {
  const address = addressKey(subject.address);
  if (subject.purpose === 'register') return [{ key: `r ${address}`, usernameKey: null }];
  const byAddress: Scope = { key: `a ${address}`, usernameKey: null };
  if (subject.usernameKey === undefined) return [byAddress];
  const usernameKey = usernameKeyOf(subject.usernameKey);
  // Sorted by key: every transaction locks its rows in the same order, so none waits in a cycle.
  return [byAddress, { key: `u ${address} ${usernameKey}`, usernameKey }].sort((x, y) =>
    x.key < y.key ? -1 : 1,
  );
}

/** Static SQL text with bound values: `text` pieces are written as is, every value is a parameter. */
type Piece = string | { readonly value: unknown };
const v = (value: unknown): Piece => ({ value });

function statement(adapter: DbAdapter, pieces: readonly Piece[]): RenderedSql {
  const builder = new SqlBuilder(adapter.dialect);
  for (const piece of pieces) {
    if (typeof piece === 'string') builder.append(piece);
    else builder.appendValue(piece.value);
  }
  return renderSql(adapter.dialect, builder.build());
}

const inList = (scopes: readonly Scope[]): Piece[] =>
  scopes.flatMap((s, i): Piece[] => (i === 0 ? [v(s.key)] : [', ', v(s.key)]));

// VARBINARY keys come back from mysql2 as Buffers.
const text = (value: unknown): string => (Buffer.isBuffer(value) ? value.toString('utf8') : String(value));

const stateOf = (row: Row): ThrottleState => ({
  windowStart: Number(row['window_start']),
  failures: Number(row['failures']),
  pending: Number(row['pending']),
  pendingSince: Number(row['pending_since']),
});

const DECREMENT_PENDING = 'pending = CASE WHEN pending > 0 THEN pending - 1 ELSE 0 END';

export function tooManyAttempts(retryAfter: number): RestError {
  return new RestError('too_many_attempts', 'too many failed login attempts; try again later', {
    headers: { 'Retry-After': String(retryAfter) },
    details: { retry_after: retryAfter },
  });
}

type Outcome = Verdict | { readonly kind: 'missing'; readonly scopes: readonly Scope[] };

export function createLoginRateLimiter(options: RateLimiterOptions): LoginRateLimiter {
  const { adapter, logger } = options;
  const limits = options.limits ?? DEFAULT_LOGIN_LIMITS;
  const clock = options.clock ?? Date.now;
  const maxWaitMs = options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
  const sweepIntervalMs = options.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS;
  const windowMs = limits.windowSeconds * 1000;
  const T = LOGIN_THROTTLE_TABLE;
  let lastSweep = clock();
  let sweeping: Promise<void> | undefined;

  async function usernameFailures(tx: DbSession, usernameKey: string, now: number): Promise<number> {
    const sql = statement(adapter, [
      `SELECT COALESCE(SUM(failures), 0) AS n FROM ${T} WHERE username_key = `,
      v(usernameKey),
      ' AND window_start > ',
      v(now - windowMs),
    ]);
    return Number((await tx.query(sql)).rows[0]?.['n'] ?? 0);
  }

  /** One transaction: lock the rows, judge them, and on `go` count the attempt as pending. */
  function reserve(scopes: readonly Scope[], now: number): Promise<Outcome> {
    return adapter.transaction(async (tx): Promise<Outcome> => {
      const select = statement(adapter, [
        `SELECT throttle_key, window_start, failures, pending, pending_since FROM ${T} WHERE throttle_key IN (`,
        ...inList(scopes),
        // Row locks held until COMMIT, so two processes cannot both read a count and both add
        // to it (the dialect's forUpdate; SQLite's transaction holds its one write lock).
        `) ORDER BY throttle_key${adapter.dialect.forUpdate}`,
      ]);
      const states = new Map((await tx.query(select)).rows.map((r) => [text(r['throttle_key']), stateOf(r)]));
      const missing = scopes.filter((s) => !states.has(s.key));
      const checks = [];
      for (const scope of scopes) {
        const state = states.get(scope.key);
        if (state === undefined) continue;
        let limit = limits.perAddress;
        if (scope.usernameKey !== null) {
          const failedHere = liveCounts(state, now, windowMs).failures > 0;
          limit = usernameScopeLimit(
            limits,
            failedHere,
            failedHere ? await usernameFailures(tx, scope.usernameKey, now) : 0,
          );
        }
        checks.push({ state, limit });
      }
      const verdict = judge(checks, now, windowMs);
      // A client address already refused creates no row for a new username: refused as it is.
      if (missing.length > 0)
        return verdict.kind === 'refuse' ? verdict : { kind: 'missing', scopes: missing };
      if (verdict.kind === 'go') {
        await tx.query(
          statement(adapter, [
            `UPDATE ${T} SET pending = CASE WHEN pending_since > `,
            v(now - STALE_PENDING_MS),
            ' THEN pending + 1 ELSE 1 END, pending_since = ',
            v(now),
            ' WHERE throttle_key IN (',
            ...inList(scopes),
            ')',
          ]),
        );
      }
      return verdict;
    });
  }

  /** Creates the rows a first attempt needs; a row another process created meanwhile is fine. */
  async function createRows(scopes: readonly Scope[]): Promise<void> {
    for (const scope of scopes) {
      try {
        await adapter.query(
          statement(adapter, [
            `INSERT INTO ${T} (throttle_key, username_key) VALUES (`,
            v(scope.key),
            ', ',
            v(scope.usernameKey),
            ')',
          ]),
        );
      } catch (e) {
        if (!(isRestError(e) && e.code === 'unique_violation')) throw e;
      }
    }
  }

  /** Deletes rows untouched for a whole window (they say nothing), one statement per row. */
  async function sweep(now: number): Promise<void> {
    const cutoff = now - windowMs;
    const stale = [' WHERE window_start <= ', v(cutoff), ' AND pending_since <= ', v(cutoff)];
    const { rows } = await adapter.query(
      statement(adapter, [`SELECT throttle_key FROM ${T}`, ...stale, ` LIMIT ${SWEEP_BATCH}`]),
    );
    for (const row of rows) {
      await adapter.query(
        statement(adapter, [
          `DELETE FROM ${T}`,
          ...stale,
          ' AND throttle_key = ',
          v(text(row['throttle_key'])),
        ]),
      );
    }
  }

  function maybeSweep(now: number): void {
    if (sweeping !== undefined || now - lastSweep < sweepIntervalMs) return;
    lastSweep = now;
    sweeping = sweep(now)
      .catch((err: unknown) => logger?.warn({ err }, 'login throttle: could not delete old rows'))
      .finally(() => {
        sweeping = undefined;
      });
  }

  function attempt(scopes: readonly Scope[]): LoginAttempt {
    let open = true;
    const end = async (setFor: (scope: Scope, now: number) => Piece[]): Promise<void> => {
      if (!open) return;
      open = false;
      const now = clock();
      try {
        for (const scope of scopes) {
          await adapter.query(
            statement(adapter, [
              `UPDATE ${T} SET `,
              ...setFor(scope, now),
              ' WHERE throttle_key = ',
              v(scope.key),
            ]),
          );
        }
      } catch (err) {
        // The attempt stays pending until it is stale (STALE_PENDING_MS); the answer stands.
        logger?.warn({ err }, 'login throttle: could not record the end of an attempt');
      }
    };
    return {
      // A failure opens a new window when the last one is over. The SET list reads no column it
      // assigned before: MySQL evaluates it left to right with the new values
      // (https://dev.mysql.com/doc/refman/8.0/en/update.html), PostgreSQL and SQLite with the old.
      failed: () =>
        end((_scope, now) => [
          'failures = CASE WHEN window_start > ',
          v(now - windowMs),
          ' THEN failures + 1 ELSE 1 END, window_start = CASE WHEN window_start > ',
          v(now - windowMs),
          ' THEN window_start ELSE ',
          v(now),
          ` END, ${DECREMENT_PENDING}`,
        ]),
      succeeded: () =>
        end((scope) => [
          scope.usernameKey === null
            ? DECREMENT_PENDING
            : `failures = 0, window_start = 0, ${DECREMENT_PENDING}`,
        ]),
      abandoned: () => end(() => [DECREMENT_PENDING]),
    };
  }

  return {
    async begin(subject) {
      const scopes = scopesOf(subject);
      // The wait is measured on the monotonic clock; `clock` dates the windows.
      const deadline = performance.now() + maxWaitMs;
      for (let round = 0; ; round++) {
        const now = clock();
        const outcome = await reserve(scopes, now);
        switch (outcome.kind) {
          case 'go':
            maybeSweep(now);
            return attempt(scopes);
          case 'refuse':
            throw tooManyAttempts(outcome.retryAfter);
          case 'missing':
            await createRows(outcome.scopes);
            break;
          case 'wait':
            // Attempts in flight end within one password comparison; poll until they do.
            if (performance.now() >= deadline) throw tooManyAttempts(1);
            await sleep(Math.min(100, 5 * 2 ** Math.min(round, 5)));
            break;
        }
      }
    },

    async unlock(usernameKey, session = adapter) {
      const sql = statement(adapter, [
        `DELETE FROM ${T} WHERE username_key = `,
        v(usernameKeyOf(usernameKey)),
      ]);
      return (await session.query(sql)).rowCount;
    },

    async lockouts() {
      const now = clock();
      const { rows } = await adapter.query(
        statement(adapter, [
          `SELECT username_key, window_start, failures, pending, pending_since FROM ${T} WHERE username_key IS NOT NULL AND window_start > `,
          v(now - windowMs),
        ]),
      );
      const byUsername = new Map<string, ThrottleState[]>();
      for (const row of rows) {
        const key = text(row['username_key']);
        byUsername.set(key, [...(byUsername.get(key) ?? []), stateOf(row)]);
      }
      // Each (username, address) row judged as `begin` would judge an attempt from that address.
      const until = new Map<string, number>();
      for (const [key, states] of byUsername) {
        const total = states.reduce((n, state) => n + liveCounts(state, now, windowMs).failures, 0);
        for (const state of states) {
          const limit = usernameScopeLimit(limits, liveCounts(state, now, windowMs).failures > 0, total);
          if (judge([{ state, limit }], now, windowMs).kind !== 'refuse') continue;
          until.set(key, Math.max(until.get(key) ?? 0, state.windowStart + windowMs));
        }
      }
      return { lockedUntil: (usernameKey) => until.get(usernameKeyOf(usernameKey)) };
    },

    async close() {
      await sweeping;
    },
  };
}
