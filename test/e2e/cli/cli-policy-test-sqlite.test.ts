// `rest policy test` on sqlite: the cases of policy-test-suite.ts (a file per database, run side by side).

import { describePolicyTest } from './policy-test-suite.js';

describePolicyTest('sqlite');
