// `auth_policies.columns` (docs/authentication.md): a database set up by the previous version gains
// the column in place when a server starts, every stored row kept with NULL (every column).

import { expect, it } from 'vitest';
import { rollBackPolicyColumns } from '../../support/auth-history.js';
import { startTestServer } from '../../support/server.js';
import { forEachAuthDatabase, replacePolicies } from './policy-support.js';

const POLICY_FIELDS = 'id, table_name, action, expression, description';

forEachAuthDatabase('policy columns', (ctx) => {
  it('a database set up by the previous version gains auth_policies.columns, keeping every row', async () => {
    const { sql, kind, config } = ctx();
    await replacePolicies(ctx(), [
      { table_name: 'notes', action: 'read', expression: 'user_id = auth_user.id' },
    ]);
    const before = await sql.rows(`SELECT ${POLICY_FIELDS} FROM auth_policies ORDER BY id`);
    expect(before).toHaveLength(4);
    await rollBackPolicyColumns(sql, kind);
    await expect(sql.rows('SELECT columns FROM auth_policies')).rejects.toThrow();
    const again = await startTestServer(config);
    try {
      expect(await sql.rows(`SELECT ${POLICY_FIELDS} FROM auth_policies ORDER BY id`)).toEqual(before);
      const stored = await sql.rows('SELECT columns FROM auth_policies ORDER BY id');
      expect(stored).toEqual(before.map(() => ({ columns: null })));
    } finally {
      await again.handle.close();
    }
  });
});
