// One describe block per database kind, titled `<title> [<kind>]`; a kind without its server
// (MariaDB without REST_TEST_MYSQL_URL) is skipped loudly, with the reason in the title.

import { describe } from 'vitest';
import type { DialectName } from '../../compiler/types.js';
import { ALL_KINDS, isAvailable, skipReason } from './databases.js';

export function describeEachDatabase(title: string, body: (kind: DialectName) => void): void {
  for (const kind of ALL_KINDS) {
    const reason = skipReason(kind);
    describe.skipIf(!isAvailable(kind))(
      `${title} [${kind}]${reason === undefined ? '' : ` — ${reason}`}`,
      () => body(kind),
    );
  }
}
