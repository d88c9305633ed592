// The user-state cache against a database whose answers the test releases by hand: a session
// revoked by this process (forget after the commit) is never served from a read that started before
// the revocation, even when that read is still on its way.

import { describe, expect, it } from 'vitest';
import { sqliteDialect } from '../../../../compiler/sql/sqlite-dialect.js';
import type { DbAdapter, QueryResult } from '../../../../runtime/db/adapter.js';
import { userStamp } from '../../../../runtime/auth/sessions.js';
import { createUserStates } from '../../../../runtime/auth/user-states.js';

const HASH = '$2b$04$abcdefghijklmnopqrstuv';
const EXPIRES = Date.now() + 3_600_000;

/** auth_users ⟕ auth_sessions rows of user 1 as the database holds them when a read starts. */
function rowsNow(sessionLive: boolean): QueryResult {
  const user = { id: 1, username: 'alice', is_admin: 0, password: HASH };
  const session = sessionLive
    ? { sid: 's1', user_stamp: userStamp(HASH, false), expires_at: EXPIRES }
    : { sid: null, user_stamp: null, expires_at: null };
  return { rows: [{ ...user, ...session }], rowCount: 1 };
}

describe('user states', () => {
  it('a session revoked here is refused even while a read from before the revocation is on its way', async () => {
    let live = true;
    const held: Array<() => void> = [];
    // Each read takes its rows when it starts and answers when the test lets it.
    const adapter = {
      kind: 'sqlite',
      dialect: sqliteDialect,
      query: (): Promise<QueryResult> => {
        const rows = rowsNow(live);
        return new Promise((resolve) => held.push(() => resolve(rows)));
      },
    } as unknown as DbAdapter;
    const states = createUserStates({ adapter, changes: { kind: 'poll', intervalMs: 3_600_000 } });
    try {
      const before = states.sessionUser(1, 's1');
      expect(held).toHaveLength(1);
      // The revocation commits, then this process forgets the user.
      live = false;
      states.forget(1);
      const after = states.sessionUser(1, 's1');
      expect(held, 'a request after the revocation reads the user again').toHaveLength(2);
      for (const release of held) release();
      expect((await before)?.username).toBe('alice');
      expect(await after).toBeUndefined();
      expect(await states.sessionUser(1, 's1'), 'and so does the next one').toBeUndefined();
    } finally {
      await states.close();
    }
  });
});
