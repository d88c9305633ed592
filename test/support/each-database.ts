// One describe block per database kind, titled `<title> [<kind>]`; a kind without its server
// (MariaDB without REST_TEST_MYSQL_URL) is skipped loudly, with the reason in the title.

import { describe } from 'vitest';
import type { DialectName } from '../../compiler/types.js';
import { ALL_KINDS, serverSkipReason, skipReason } from './databases.js';

export interface EachDatabaseOptions {
  /**
   * The blocks of the kinds run side by side, and so do the cases inside each (their `expect`
   * comes from the test context): for cases that wait on processes and share nothing they change.
   */
  readonly concurrent?: boolean;
}

function eachDatabase(
  title: string,
  body: (kind: DialectName) => void,
  reasonFor: (kind: DialectName) => string | undefined,
  options: EachDatabaseOptions,
): void {
  for (const kind of ALL_KINDS) {
    const reason = reasonFor(kind);
    const block = describe.skipIf(reason !== undefined);
    (options.concurrent === true ? block.concurrent : block)(
      `${title} [${kind}]${reason === undefined ? '' : ` — ${reason}`}`,
      () => body(kind),
    );
  }
}

export function describeEachDatabase(
  title: string,
  body: (kind: DialectName) => void,
  options: EachDatabaseOptions = {},
): void {
  eachDatabase(title, body, skipReason, options);
}

/**
 * As describeEachDatabase, for a block that needs a real server of each kind (several processes
 * on one database, NOTIFY between them): PostgreSQL's block skips on the embedded PGlite too.
 */
export function describeEachServer(
  title: string,
  body: (kind: DialectName) => void,
  options: EachDatabaseOptions = {},
): void {
  eachDatabase(title, body, serverSkipReason, options);
}
