// Makes a set-up database look as the first version of `rest` left it: only auth_users and
// auth_policies (sql/001, sql/002), without the tables added since — the login throttle (003)
// and the sessions (004). Upgrade tests start from there.

import type { DialectName } from '../../compiler/types.js';
import type { RawSql } from './server.js';

export async function rollBackToFirstAuthVersion(sql: RawSql, kind: DialectName): Promise<void> {
  await sql.exec('DROP TABLE auth_refresh_tokens');
  await sql.exec('DROP TABLE auth_sessions');
  // The NOTIFY triggers of 004 on auth_users go with their function.
  if (kind === 'postgres') await sql.exec('DROP FUNCTION rest_notify_user() CASCADE');
  await sql.exec('DROP TABLE auth_login_throttle');
  // postgres-migrations records each applied file; without their records 003 and 004 are new again.
  if (kind === 'postgres') await sql.exec('DELETE FROM migrations WHERE id >= 3');
}
