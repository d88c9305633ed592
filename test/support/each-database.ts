// One describe block per database kind, titled `<title> [<kind>]`; a kind without its server
// (MariaDB without REST_TEST_MYSQL_URL) is skipped loudly, with the reason in the title.

import { describe } from 'vitest';
import type { DialectName } from '../../compiler/types.js';
import { ALL_KINDS, serverSkipReason, skipReason } from './databases.js';

function eachDatabase(
  title: string,
  body: (kind: DialectName) => void,
  reasonFor: (kind: DialectName) => string | undefined,
): void {
  for (const kind of ALL_KINDS) {
    const reason = reasonFor(kind);
    describe.skipIf(reason !== undefined)(
      `${title} [${kind}]${reason === undefined ? '' : ` — ${reason}`}`,
      () => body(kind),
    );
  }
}

export function describeEachDatabase(title: string, body: (kind: DialectName) => void): void {
  eachDatabase(title, body, skipReason);
}

/**
 * As describeEachDatabase, for a block that needs a real server of each kind (several processes
 * on one database, NOTIFY between them): PostgreSQL's block skips on the embedded PGlite too.
 */
export function describeEachServer(title: string, body: (kind: DialectName) => void): void {
  eachDatabase(title, body, serverSkipReason);
}
