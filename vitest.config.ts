// Two projects, run side by side by `vitest run` (`npm test`):
// - unit: test/unit and test/property in worker threads without per-file isolation (modules load
//   once per thread: these tests hold no state between files);
// - e2e: test/contract and test/e2e in three child processes, several files at a time: they
//   mostly wait on databases, sockets and child processes, so on a 2-core machine one fork at a
//   time (vitest's default there) leaves the CPU idle. A fork runs one file after another without
//   reloading the modules (isolate: false): a fresh fork per file loaded the runtime, its drivers
//   and express again, 1–3 s of a busy CPU for each of some 45 files. Each file starts and closes
//   its own servers and databases; none sets process-wide state (environment, signal handlers,
//   mocks) that a later file in the same fork could see.
// One file or folder: `npx vitest run test/unit/grammar`; one project: `npx vitest run --project unit`.

import { defineConfig } from 'vitest/config';
import { LongFirstSequencer } from './test/support/long-first-sequencer.js';

const globalSetup = ['test/support/global-setup.ts'];

export default defineConfig({
  test: {
    reporters: ['default'],
    testTimeout: 30_000,
    // Files that wait long (child processes, drains) start first, whatever their size.
    sequence: { sequencer: LongFirstSequencer },
    hookTimeout: 60_000,
    // The pools are shared by the projects; each project picks one.
    poolOptions: {
      threads: { isolate: false, maxThreads: 2 },
      // minForks = maxForks: with fewer kept (vitest's default here is one), runs of several
      // files ended with tinypool's unhandled "Terminating worker thread" (vitest 3.2.7).
      forks: { isolate: false, minForks: 3, maxForks: 3 },
    },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'test/property/**/*.test.ts', 'bench/test/**/*.test.ts'],
          exclude: ['bench/test/smoke.test.ts'],
          globalSetup,
          pool: 'threads',
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/contract/**/*.test.ts', 'test/e2e/**/*.test.ts'],
          globalSetup,
          pool: 'forks',
        },
      },
    ],
  },
});
