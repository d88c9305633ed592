// `npm run bench:hostile`: the hostile-load lane of `npm run bench` alone (bench/hostile.ts),
// printed as a table: connections opened by failing requests, abandoned slow writes, refusals past
// -db.max_waiting, on both PostgreSQL paths and MariaDB.
//
//   npm run bench:hostile -- [--failing 1000] [--abandoned 50] [--max-waiting 16] [--crowd 80]
//                            [--read-seconds 3] [--connections 16]
// PostgreSQL: REST_TEST_PG_URL (else postgres://postgres@127.0.0.1:5432/postgres); MariaDB:
// REST_TEST_MYSQL_URL (else mysql://root@127.0.0.1:3306/test; `--mysql-url off` leaves it out).

import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { HOSTILE_FULL, hostileTable, measureHostile } from './hostile.js';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..', '..');
const text = (n: number): string => String(n);

const { values } = parseArgs({
  options: {
    failing: { type: 'string', default: text(HOSTILE_FULL.failing) },
    abandoned: { type: 'string', default: text(HOSTILE_FULL.abandoned) },
    'max-waiting': { type: 'string', default: text(HOSTILE_FULL.maxWaiting) },
    crowd: { type: 'string', default: text(HOSTILE_FULL.crowd) },
    'read-seconds': { type: 'string', default: text(HOSTILE_FULL.readSeconds) },
    connections: { type: 'string', default: text(HOSTILE_FULL.connections) },
    'mysql-url': { type: 'string' },
  },
});
const mysqlUrl =
  values['mysql-url'] ?? process.env['REST_TEST_MYSQL_URL'] ?? 'mysql://root@127.0.0.1:3306/test';

const report = await measureHostile({
  pgAdminUrl: process.env['REST_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  mysqlUrl: mysqlUrl === 'off' ? undefined : mysqlUrl,
  restCli: join(repoRoot, 'dist', 'cli', 'main.js'),
  driverScript: join(here, 'driver.js'),
  failing: Number(values.failing),
  abandoned: Number(values.abandoned),
  maxWaiting: Number(values['max-waiting']),
  crowd: Number(values.crowd),
  readSeconds: Number(values['read-seconds']),
  connections: Number(values.connections),
  progress: (line) => process.stderr.write(`${line}\n`),
});
for (const line of hostileTable(report)) console.log(line);
