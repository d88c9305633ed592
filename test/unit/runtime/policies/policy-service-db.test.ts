// addPolicy and listPolicies on each real database: the stored row comes back with its id, an
// invalid policy writes nothing.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setupAuth } from '../../../../runtime/auth/setup.js';
import type { DbAdapter } from '../../../../runtime/db/adapter.js';
import { createAdapter } from '../../../../runtime/db/create-adapter.js';
import { addPolicy, listPolicies } from '../../../../runtime/policies/policy-service.js';
import {
  ALL_KINDS,
  createTestDatabase,
  isAvailable,
  skipReason,
  type TestDatabase,
} from '../../../support/databases.js';

for (const kind of ALL_KINDS) {
  describe.skipIf(!isAvailable(kind))(`policy service [${kind}]${skipReason(kind) ?? ''}`, () => {
    let db: TestDatabase;
    let adapter: DbAdapter;
    beforeAll(async () => {
      db = await createTestDatabase(kind);
      adapter = await createAdapter(db.url);
      await adapter.exec('CREATE TABLE notes (id integer PRIMARY KEY, user_id integer, body varchar(20))');
      await setupAuth(adapter, { dbUrl: db.url });
    });
    afterAll(async () => {
      await adapter?.close();
      await db?.drop();
    });

    it('adds a valid policy and lists it after the three defaults', async () => {
      const schema = await adapter.introspect();
      const added = await addPolicy(adapter, schema, {
        table_name: 'notes',
        action: 'read',
        expression: "body = 'x' or user_id = auth_user.id",
        description: 'mine or x',
      });
      expect(added).toEqual({
        id: 4,
        table_name: 'notes',
        action: 'read',
        expression: "body = 'x' or user_id = auth_user.id",
        description: 'mine or x',
        columns: null,
      });
      const rows = await listPolicies(adapter);
      expect(rows.map((r) => r.id)).toEqual([1, 2, 3, 4]);
      expect(rows[3]).toEqual(added);
    });

    it('writes nothing for an invalid policy', async () => {
      const schema = await adapter.introspect();
      await expect(
        addPolicy(adapter, schema, {
          table_name: 'notes',
          action: 'read',
          expression: 'owner = 1',
          description: 'x',
        }),
      ).rejects.toMatchObject({ code: 'invalid_policy' });
      expect(await listPolicies(adapter)).toHaveLength(4);
    });
  });
}
