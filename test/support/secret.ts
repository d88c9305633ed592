// A fresh JWT secret for a test server: 32 random bytes as 64 hex digits, one home for every
// suite that starts a server (a secret that begins with '-' has a CLI test of its own, in
// test/e2e/cli/cli-config.test.ts).

import { randomBytes } from 'node:crypto';

export const newSecret = (): string => randomBytes(32).toString('hex');
