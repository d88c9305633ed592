// `rest policy test` on postgres: the cases of policy-test-suite.ts (a file per database, run side by side).

import { describePolicyTest } from './policy-test-suite.js';

describePolicyTest('postgres');
