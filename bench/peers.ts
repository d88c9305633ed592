// `npm run bench:peers`: runs the peer harness (`bench/peers/run.sh`, or --harness) against this
// checkout's build with rest's two paths and Platformatic DB in interleaved rounds, then prints
// the peer targets with the measured ratios (bench/peer-report.ts). `--report-only` reads the
// harness's last results instead of running it; `--dry-run` checks that the harness and the builds
// it runs are where it looks and prints what it would run. The harness needs PostgreSQL at
// 127.0.0.1:5432 and the npm registry (it installs Platformatic DB and Node 22 into $PEERS_DIR,
// default /tmp/peers).

import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  PEER_VARIANTS,
  parseTrace,
  renderPeerReport,
  type PeerResults,
  type PeerScenario,
} from './peer-report.js';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

const { values: o } = parseArgs({
  options: {
    harness: { type: 'string', default: resolve(repo, 'bench/peers') },
    rounds: { type: 'string', default: '5' },
    'write-rounds': { type: 'string', default: '5' },
    'no-writes': { type: 'boolean', default: false },
    'report-only': { type: 'boolean', default: false },
    'dry-run': { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});

const USAGE = `usage: npm run bench:peers -- [--rounds <n>] [--write-rounds <n>] [--no-writes]
       [--harness <dir>]   (default bench/peers)
       [--report-only]     (report the harness's last results in $PEERS_DIR instead of running it)
       [--dry-run]         (check the paths and print what would run, run nothing)
environment: PEERS_DIR (default /tmp/peers), JWT_SECRET`;
const writes = !o['no-writes'];
const peersDir = process.env['PEERS_DIR'] ?? '/tmp/peers';

/** What run.sh is given, besides the rest of the environment. */
const harnessEnv = {
  REST_DIR: repo,
  PEERS_DIR: peersDir,
  ROUNDS: o.rounds,
  WRITE_ROUNDS: o['write-rounds'],
  WRITES: writes ? '1' : '0',
  VARIANTS: PEER_VARIANTS.join(','),
};

/** The files the harness reads from its own folder and from the checkout (REST_DIR). */
function neededFiles(): readonly string[] {
  return [
    join(o.harness, 'run.sh'),
    join(o.harness, 'setup-db.sql'),
    join(o.harness, 'setup-postgraphile.sql'),
    join(o.harness, 'variants.mjs'),
    join(o.harness, 'servers'),
    join(repo, 'dist', 'cli', 'main.js'),
    join(repo, 'dist-bench', 'bench', 'pg-proxy.js'),
  ];
}

/** `--dry-run`: every path resolves, and what would run. */
function dryRun(): number {
  const missing = neededFiles().filter((file) => !existsSync(file));
  for (const file of neededFiles()) console.log(`${existsSync(file) ? 'found  ' : 'MISSING'} ${file}`);
  const vars = Object.entries(harnessEnv).map(([k, v]) => `${k}=${v}`);
  console.log(`would run: ${vars.join(' ')} bash ${join(o.harness, 'run.sh')}`);
  return missing.length === 0 ? 0 : 1;
}

function runHarness(): Promise<void> {
  const env = { ...process.env, ...harnessEnv };
  return new Promise((done, fail) => {
    // The harness's own progress goes to stderr; stdout stays the report.
    const child = spawn('bash', [join(o.harness, 'run.sh')], {
      env,
      stdio: ['ignore', process.stderr, 'inherit'],
    });
    child.on('error', fail);
    child.on('exit', (code) =>
      code === 0 ? done() : fail(new Error(`the peer harness exited with ${code}`)),
    );
  });
}

/** The newest raw result file of `scenario` the harness wrote. */
function latest(scenario: string): PeerResults {
  const dir = join(peersDir, 'results');
  const files = readdirSync(dir).filter((f) => f.startsWith(`${scenario}-`) && f.endsWith('.json'));
  const newest = files.sort().at(-1);
  if (newest === undefined) throw new Error(`no ${scenario} results in ${dir}: run without --report-only`);
  return JSON.parse(readFileSync(join(dir, newest), 'utf8')) as PeerResults;
}

function scenario(name: 'read' | 'write'): PeerScenario {
  return {
    results: latest(name),
    trips: parseTrace(readFileSync(join(peersDir, 'logs', `trace-${name}.txt`), 'utf8')),
  };
}

if (o.help) {
  console.log(USAGE);
  process.exit(0);
}
if (o['dry-run']) process.exit(dryRun());
if (!o['report-only']) await runHarness();
const heading = `Against the peers, ${new Date().toISOString().slice(0, 10)}`;
process.stdout.write(renderPeerReport(scenario('read'), writes ? scenario('write') : undefined, heading));
