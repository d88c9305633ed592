// `npm run bench:pooler`: the pooler lane of `npm run bench` alone (bench/pooler.ts), printed as a
// table: each path's req/s and the pooled/direct ratio (median of the rounds; target ≥ 0.7×).
//
//   npm run bench:pooler -- [--seconds 5] [--rounds 3] [--connections 16]
// PostgreSQL: REST_TEST_PG_URL (else postgres://postgres@127.0.0.1:5432/postgres); PgBouncer:
// REST_TEST_PGBOUNCER_URL (else postgres://postgres@127.0.0.1:6432/postgres; .ci/pgbouncer.ini).

import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { measurePooler, poolerTable } from './pooler.js';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..', '..');

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '16' },
  },
});

const report = await measurePooler({
  pgAdminUrl: process.env['REST_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  bouncerUrl: process.env['REST_TEST_PGBOUNCER_URL'] ?? 'postgres://postgres@127.0.0.1:6432/postgres',
  restCli: join(repoRoot, 'dist', 'cli', 'main.js'),
  driverScript: join(here, 'driver.js'),
  rounds: Number(values.rounds),
  seconds: Number(values.seconds),
  connections: Number(values.connections),
  progress: (line) => process.stderr.write(`${line}\n`),
});
for (const line of poolerTable(report)) console.log(line);
