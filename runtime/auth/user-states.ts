// The stored state of built-in users, cached per server process (docs/authentication.md): username, is_admin
// and live sessions. A built-in user's request is judged against it without a round trip; the
// first request of a user (or of a session this process has not seen) loads it once. Changes made
// anywhere reach the cache within moments — PostgreSQL: the `rest_users` NOTIFY of
// sql/004_sessions.sql, with the user's id; MySQL/MariaDB and SQLite: every cached user re-read
// once per poll interval — and changes made by this process at once (`forget`).

import type { DbAdapter } from '../db/adapter.js';
import type { ChangeSource } from '../db/change-source.js';
import type { SessionUser, SessionUsers } from './tokens.js';
import { loadUserStates, type StoredUserState } from './sessions.js';

export const DEFAULT_USER_CACHE_SIZE = 10_000;
export const DEFAULT_USER_POLL_INTERVAL_MS = 1000;
/** Users re-read by one statement of a poll. */
const POLL_BATCH = 500;

export interface UserStatesOptions {
  readonly adapter: DbAdapter;
  /** A push source's payload is the changed user's id; none (a reconnect) means anyone. */
  readonly changes: ChangeSource;
  readonly now?: () => number;
  readonly cacheSize?: number;
  readonly logger?: { warn(fields: Readonly<Record<string, unknown>>, message: string): void };
}

export interface UserStates extends SessionUsers {
  /** This process changed the user's row or sessions: the next request reads them again. */
  forget(userId: number): void;
  /** This process changed users it cannot name (a filtered write to auth_users). */
  forgetAll(): void;
  close(): Promise<void>;
}

/** A cached user; `null` = no such user. Sessions seen missing are remembered as `null`. */
interface Entry {
  readonly state: StoredUserState | null;
  readonly missing: Set<string>;
}

export function createUserStates(options: UserStatesOptions): UserStates {
  const { adapter } = options;
  const now = options.now ?? Date.now;
  const cacheSize = options.cacheSize ?? DEFAULT_USER_CACHE_SIZE;
  const entries = new Map<number, Entry>();
  /** Bumped by every change heard; a load that saw a change while running is not cached. */
  let changes = 0;
  const inFlight = new Map<number, Promise<Entry>>();

  function remember(userId: number, entry: Entry): void {
    entries.delete(userId);
    if (entries.size >= cacheSize) {
      const oldest = entries.keys().next();
      if (oldest.done !== true) entries.delete(oldest.value);
    }
    entries.set(userId, entry);
  }

  function load(userId: number): Promise<Entry> {
    const pending = inFlight.get(userId);
    if (pending !== undefined) return pending;
    const seen = changes;
    const read = async (): Promise<Entry> => {
      const state = (await loadUserStates(adapter, [userId])).get(userId) ?? null;
      const entry: Entry = { state, missing: new Set() };
      if (changes === seen) remember(userId, entry);
      return entry;
    };
    const loading = read().finally(() => {
      // A change heard meanwhile has already let a later read take this one's place.
      if (inFlight.get(userId) === loading) inFlight.delete(userId);
    });
    inFlight.set(userId, loading);
    return loading;
  }

  // A read on its way may have started before the change: a request from now on never waits for
  // it (it would answer what the change undid), but starts a read of its own.
  const changed = (userId: number | undefined): void => {
    changes += 1;
    if (userId === undefined) {
      entries.clear();
      inFlight.clear();
    } else {
      entries.delete(userId);
      inFlight.delete(userId);
    }
  };

  /** Re-reads every cached user, a batch per statement (the poll of MySQL/MariaDB and SQLite). */
  async function rereadAll(): Promise<void> {
    const ids = [...entries.keys()];
    for (let i = 0; i < ids.length; i += POLL_BATCH) {
      const batch = ids.slice(i, i + POLL_BATCH);
      const seen = changes;
      const states = await loadUserStates(adapter, batch);
      if (changes !== seen) continue;
      for (const id of batch) {
        const before = entries.get(id);
        if (before === undefined) continue;
        entries.set(id, { state: states.get(id) ?? null, missing: new Set() });
      }
    }
  }

  let stop: () => Promise<void>;
  if (options.changes.kind === 'push') {
    const subscription = options.changes.subscribe((payload) => {
      const id = payload === undefined || payload === '' ? undefined : Number(payload);
      changed(id !== undefined && Number.isSafeInteger(id) ? id : undefined);
    });
    stop = () => subscription.close();
  } else {
    let polling = false;
    const timer = setInterval(() => {
      if (polling) return;
      polling = true;
      rereadAll()
        .catch((e: unknown) =>
          options.logger?.warn({ err: e instanceof Error ? e.message : String(e) }, 'user state poll failed'),
        )
        .finally(() => (polling = false));
    }, options.changes.intervalMs ?? DEFAULT_USER_POLL_INTERVAL_MS);
    timer.unref();
    stop = async () => clearInterval(timer);
  }

  const live = (entry: Entry, sid: string): SessionUser | undefined => {
    const session = entry.state?.sessions.get(sid);
    if (entry.state === null || session === undefined) return undefined;
    if (session.stamp !== entry.state.stamp || session.expiresAt <= now()) return undefined;
    return entry.state;
  };

  return {
    async sessionUser(userId, sid) {
      let entry = entries.get(userId);
      // A session opened since the user was cached (here or by another process): read once more.
      if (
        entry === undefined ||
        (entry.state !== null && !entry.state.sessions.has(sid) && !entry.missing.has(sid))
      ) {
        entry = await load(userId);
        if (entry.state !== null && !entry.state.sessions.has(sid)) entry.missing.add(sid);
      }
      return live(entry, sid);
    },
    forget: changed,
    forgetAll: () => changed(undefined),
    async close() {
      await stop();
      entries.clear();
    },
  };
}
