// Makes a set-up database look as an older version of `rest` left it; upgrade tests start from
// there. The first version had only auth_users and auth_policies (sql/001, sql/002); the login
// throttle (003) and the sessions (004) came next, then `auth_policies.columns` (005).

import type { DialectName } from '../../compiler/types.js';
import type { RawSql } from './server.js';

/** As the version before `auth_policies.columns` left it: every table, rows kept, no column rule. */
export async function rollBackPolicyColumns(sql: RawSql, kind: DialectName): Promise<void> {
  await sql.exec('ALTER TABLE auth_policies DROP COLUMN columns');
  // postgres-migrations records each applied file; without its record 005 is new again.
  if (kind === 'postgres') await sql.exec('DELETE FROM migrations WHERE id >= 5');
}

export async function rollBackToFirstAuthVersion(sql: RawSql, kind: DialectName): Promise<void> {
  await rollBackPolicyColumns(sql, kind);
  await sql.exec('DROP TABLE auth_refresh_tokens');
  await sql.exec('DROP TABLE auth_sessions');
  // The NOTIFY triggers of 004 on auth_users go with their function.
  if (kind === 'postgres') await sql.exec('DROP FUNCTION rest_notify_user() CASCADE');
  await sql.exec('DROP TABLE auth_login_throttle');
  // Without their records 003 and 004 are new again.
  if (kind === 'postgres') await sql.exec('DELETE FROM migrations WHERE id >= 3');
}
