// `npm run bench:peers`: runs the peer harness (`bench/peers/run.sh`, or --harness) against this
// checkout's build with rest's two paths and Platformatic DB in interleaved rounds, then prints
// the peer targets with the measured ratios (bench/peer-report.ts). `--report-only` reads the
// harness's last results instead of running it. The harness needs PostgreSQL at 127.0.0.1:5432 and
// the npm registry (it installs Platformatic DB and Node 22 into $PEERS_DIR, default /tmp/peers).

import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
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
  },
});
const writes = !o['no-writes'];
const peersDir = process.env['PEERS_DIR'] ?? '/tmp/peers';

function runHarness(): Promise<void> {
  const env = {
    ...process.env,
    REST_DIR: repo,
    PEERS_DIR: peersDir,
    ROUNDS: o.rounds,
    WRITE_ROUNDS: o['write-rounds'],
    WRITES: writes ? '1' : '0',
    VARIANTS: PEER_VARIANTS.join(','),
  };
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

if (!o['report-only']) await runHarness();
const heading = `Against the peers, ${new Date().toISOString().slice(0, 10)}`;
process.stdout.write(renderPeerReport(scenario('read'), writes ? scenario('write') : undefined, heading));
