import { afterAll, beforeAll, expect, it } from 'vitest';
import { createPgChangeListener } from '../../../../../runtime/db/postgres/pg-listener.js';
import { createTestDatabase, withPg, type TestDatabase } from '../../../../support/databases.js';
import { serverDescribe } from '../../../../support/server-only.js';

const waitFor = async (check: () => boolean, ms: number): Promise<void> => {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
};

serverDescribe()('pg change listener (postgres)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('postgres');
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('signals once connected, on every NOTIFY of its channel, and not for other channels', async () => {
    let changes = 0;
    const listener = createPgChangeListener({
      url: db.url,
      channel: 'rest_policies',
      onChange: () => void (changes += 1),
    });
    await listener.ready;
    expect(changes).toBe(1);
    await withPg(db.url, async (c) => {
      await c.query("SELECT pg_notify('rest_policies', '')");
      await c.query("SELECT pg_notify('other_channel', '')");
    });
    await waitFor(() => changes === 2, 2000);
    await new Promise((r) => setTimeout(r, 50));
    expect(changes).toBe(2);
    await listener.close();
  });

  it('reconnects after its connection is killed and signals again', async () => {
    let changes = 0;
    const listener = createPgChangeListener({
      url: db.url,
      channel: 'rest_policies',
      onChange: () => void (changes += 1),
      retryMs: 20,
    });
    await listener.ready;
    await withPg(db.url, (c) =>
      c.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN rest_policies'",
      ),
    );
    await waitFor(() => changes >= 2, 2000);
    const before = changes;
    await withPg(db.url, (c) => c.query("SELECT pg_notify('rest_policies', '')"));
    await waitFor(() => changes === before + 1, 2000);
    await listener.close();
  });
});
