// `npm run bench:policy-test` (after `npm run build`): the policy-test lane of `npm run bench`
// (bench/policy-test-lane.ts) alone, printed.

import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { measurePolicyTest } from './policy-test-lane.js';
import { policyTestTable } from './report-policy-test.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const { values } = parseArgs({ options: { 'pg-url': { type: 'string' }, runs: { type: 'string' } } });
const report = await measurePolicyTest({
  restCli: join(repoRoot, 'dist/cli/main.js'),
  pgAdminUrl: values['pg-url'] ?? process.env['REST_TEST_PG_URL'],
  runs: Number(values.runs ?? 5),
});
console.log(policyTestTable(report));
