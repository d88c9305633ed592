// A distributed PostgreSQL engine (Citus) under -db.rls on: start-up refuses with one line naming
// -db.rls off, since its worker nodes would not see the request's transaction-local settings; the
// portable path serves it. No Citus here: the test database's catalog lists a `citus` extension
// (pg_extension is per database, and the database is dropped afterwards), which is all rest reads.

import { afterAll, beforeAll, expect } from 'vitest';
import { isRestError } from '../../../errors/rest-error.js';
import { createTestDatabase, withPg, type TestDatabase } from '../../support/databases.js';
import { call } from '../../support/http.js';
import { newSecret } from '../../support/secret.js';
import { startTestServer, testConfig } from '../../support/server.js';
import { serverDescribe, serverIt } from '../../support/server-only.js';

serverDescribe()('a database with the citus extension [postgres]', () => {
  let db: TestDatabase;
  const secret = newSecret();
  const config = (rls: boolean) => ({
    ...testConfig(db.url),
    db: { url: db.url, rls },
    auth: { enabled: true, secret, tokenTtlSeconds: 3600 },
  });

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    await withPg(db.url, (c) =>
      c.query(`CREATE TABLE notes (id serial PRIMARY KEY, body text);
        SET allow_system_table_mods = on;
        INSERT INTO pg_extension (oid, extname, extowner, extnamespace, extrelocatable, extversion)
        VALUES (pg_nextoid('pg_extension', 'oid', 'pg_extension_oid_index'), 'citus', 10,
                'pg_catalog'::regnamespace, false, '12.1')`),
    );
  });
  afterAll(async () => {
    await db?.drop();
  });

  serverIt()('-db.rls on refuses to start with one line (exit 1) that names -db.rls off', async () => {
    const error = await startTestServer(config(true)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isRestError(error) && [error.code, error.exitCode]).toEqual(['rls_distributed', 1]);
    const message = (error as Error).message;
    expect(message).toContain('citus');
    expect(message).toContain('serve it with -db.rls off');
    expect(message).not.toContain('\n');
    // Nothing of native RLS was set up: no request role, no generated policy.
    const policies = await withPg(db.url, (c) =>
      c.query("SELECT 1 FROM pg_policies WHERE policyname LIKE 'rest_%'"),
    );
    expect(policies.rows).toEqual([]);
  });

  serverIt()('-db.rls off serves it', async () => {
    const server = await startTestServer(config(false));
    try {
      expect((await call(server.url, 'POST', '/auth/setup')).status).toBe(201);
      expect((await call(server.url, 'GET', '/notes')).status).toBe(401);
    } finally {
      await server.handle.close();
    }
  });
});
