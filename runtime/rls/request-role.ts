// The NOLOGIN role every native-RLS request runs as (`set_config('role', …, true)`, i.e. SET LOCAL
// ROLE): its name, derived from the database so that databases of one cluster never share it.

import { createHash } from 'node:crypto';

/** PostgreSQL truncates identifiers to 63 bytes (NAMEDATALEN - 1). */
const MAX_NAME_BYTES = 63;
const PREFIX = 'rest_request_';

/**
 * `rest_request_<database>`; a database name too long for that keeps a prefix and gets a short
 * hash of the whole name, so two long names never collide on one role.
 */
export function requestRoleName(database: string): string {
  const name = `${PREFIX}${database}`;
  if (Buffer.byteLength(name) <= MAX_NAME_BYTES) return name;
  const tag = `_${createHash('sha256').update(database).digest('hex').slice(0, 8)}`;
  let kept = '';
  for (const ch of database) {
    if (Buffer.byteLength(PREFIX + kept + ch + tag) > MAX_NAME_BYTES) break;
    kept += ch;
  }
  return `${PREFIX}${kept}${tag}`;
}
