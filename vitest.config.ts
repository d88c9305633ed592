// Two projects, run side by side by `vitest run` (`npm test`):
// - unit: test/unit and test/property in worker threads without per-file isolation (modules load
//   once per thread: these tests hold no state between files);
// - e2e: test/contract and test/e2e, each file in a process of its own (servers, signal handlers,
//   databases), several at a time: they mostly wait on databases, sockets and child processes,
//   so on a 2-core machine one fork at a time (vitest's default there) leaves the CPU idle.
// One file or folder: `npx vitest run test/unit/grammar`; one project: `npx vitest run --project unit`.

import { defineConfig } from 'vitest/config';

const globalSetup = ['test/support/global-setup.ts'];

export default defineConfig({
  test: {
    reporters: ['default'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // The pools are shared by the projects; each project picks one.
    poolOptions: {
      threads: { isolate: false, maxThreads: 2 },
      forks: { maxForks: 3 },
    },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'test/property/**/*.test.ts'],
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
