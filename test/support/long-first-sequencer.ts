// The order vitest starts test files in. Three forks take e2e files one after another, so the run
// ends when the file started last ends: a long file started late is the whole run's tail. Vitest
// starts the files that took longest in its previous run first, but a clean clone (CI) has no
// previous run, and then it starts the largest files first — and the files that wait longest
// (on child processes, drains and throttles) are among the smallest. Those are listed here and
// start first, longest first (measured on a full run); every other file keeps vitest's order.

import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Files that run far longer than their size says, longest first (paths from the repository root). */
export const LONG_FILES: readonly string[] = [
  'test/e2e/process/shutdown-drain.test.ts',
  'test/e2e/process/fail-closed.test.ts',
  'test/e2e/process/workers.test.ts',
  'test/e2e/http/session-cap.test.ts',
  'test/e2e/process/quick-start.test.ts',
  'test/e2e/process/sessions-processes.test.ts',
  'test/e2e/http/policy-columns.test.ts',
  'test/e2e/cli/cli-policy-test-postgres.test.ts',
  'test/e2e/http/register-throttle.test.ts',
  'test/e2e/process/login-throttle-processes.test.ts',
  'test/e2e/cli/cli-anon-key.test.ts',
  'test/e2e/http/policy-reload.test.ts',
  'test/property/grammar.property.test.ts',
];

const rankOf = (spec: TestSpecification): number =>
  LONG_FILES.findIndex((path) => spec.moduleId.replaceAll('\\', '/').endsWith(`/${path}`));

export class LongFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const long = sorted.filter((f) => rankOf(f) >= 0).sort((a, b) => rankOf(a) - rankOf(b));
    return [...long, ...sorted.filter((f) => rankOf(f) < 0)];
  }
}
