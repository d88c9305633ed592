// The bench's own smoke run (`npm run bench:smoke`): it tests the harness, not the product, so the
// root config (`npm test`) leaves it out. Run from the repository root.

import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['bench/test/smoke.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
