// Interleaved rounds A B C … A B C …; each run: 2 s idle sample of the machine, server started
// fresh, autocannon in its own process (load.mjs: warm-up then measured window), CPU of server /
// autocannon / the peerbench PostgreSQL backends / everything else sampled at the window's edges,
// RSS sampled every 200 ms, server stopped by its PID. Writes results/<scenario>-<stamp>.json and
// prints the summary table last.
// usage: node bench.mjs [--scenario read|write] [--rounds 3] [--duration 10] [--warmup 3]
//                       [--connections 32] [--variants a,b,…] [--out dir]
import pg from 'pg';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { pick, sign, PEERS } from './variants.mjs';
import { startServer, stopServer, procCpu, procStatus, machineCpu, HZ } from './lib.mjs';

const { values: o } = parseArgs({
  options: {
    scenario: { type: 'string', default: 'read' },
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32' },
    variants: { type: 'string' },
    out: { type: 'string', default: new URL('./results', import.meta.url).pathname },
  },
});
const write = o.scenario === 'write';
const variants = pick(o.variants).filter((v) => !write || v.insert);
mkdirSync(`${PEERS}/logs`, { recursive: true });
mkdirSync(`${PEERS}/specs`, { recursive: true });
mkdirSync(o.out, { recursive: true });
const mon = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
await mon.connect();

// 1,000 tokens for random users, per variant (its claim shape), same users for everyone
const users = Array.from({ length: 1000 }, () => 1 + Math.floor(Math.random() * 1000));
const specs = new Map();
for (const v of variants) {
  const tokens = await Promise.all(users.map((u) => sign(v.claims(u))));
  const req = write ? v.insert(users[0]) : v.read;
  const spec = {
    url: `http://127.0.0.1:${v.port}`,
    req,
    tokens,
    connections: Number(o.connections),
    warmup: Number(o.warmup),
    duration: Number(o.duration),
    bodies: write ? users.map((u) => v.insert(u).body) : undefined,
    expect: write
      ? '"(user_id|userId)":"?\\d|"createTodo":\\{"todo":\\{"rowId"'
      : '^(\\[\\{"id"|\\{"data":\\{"allTodos":\\{"nodes":\\[\\{"rowId")',
  };
  const file = `${PEERS}/specs/${v.name}-${o.scenario}.json`;
  writeFileSync(file, JSON.stringify(spec));
  specs.set(v.name, file);
}

async function backendPids() {
  const { rows } = await mon.query(
    "SELECT pid FROM pg_stat_activity WHERE datname = 'peerbench' AND backend_type = 'client backend'",
  );
  return rows.map((r) => r.pid);
}
function snap(serverPid, loadPid, pgPids) {
  const pgCpu = pgPids.map(procCpu).reduce((a, b) => a + (b ?? 0), 0);
  return { m: machineCpu(), server: procCpu(serverPid), load: procCpu(loadPid), pg: pgCpu, t: Date.now() };
}
async function idleSample(ms) {
  const a = machineCpu();
  await sleep(ms);
  const b = machineCpu();
  return (100 * (b.busy - a.busy)) / (b.total - a.total); // % of the whole machine (2 cores = 100 %)
}

async function oneRun(v, round) {
  const othersBefore = await idleSample(2000);
  const s = await startServer(v);
  let peakRss = 0;
  const rssTimer = setInterval(() => {
    peakRss = Math.max(peakRss, procStatus(s.pid, 'VmRSS') ?? 0);
  }, 200);
  const load = spawn(process.execPath, [new URL('./load.mjs', import.meta.url).pathname, specs.get(v.name)], {
    cwd: PEERS,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let a,
    b,
    pgPids = [],
    result;
  const rl = createInterface({ input: load.stdout });
  for await (const line of rl) {
    if (line === 'MEASURE_START') {
      pgPids = await backendPids();
      a = snap(s.pid, load.pid, pgPids);
    } else if (line === 'MEASURE_END') b = snap(s.pid, load.pid, pgPids);
    else if (line.startsWith('{')) result = JSON.parse(line);
  }
  clearInterval(rssTimer);
  const hwm = procStatus(s.pid, 'VmHWM') ?? 0;
  const crashed = s.exited();
  await stopServer(s);
  if (!result || !a || !b) throw new Error(`${v.name}: load run gave no result`);
  const ticks = (k) => b[k] - a[k];
  const total = b.m.total - a.m.total,
    busy = b.m.busy - a.m.busy;
  const others = busy - ticks('server') - ticks('load') - ticks('pg');
  const usPerReq = (t) => (result.requests ? ((t / HZ) * 1e6) / result.requests : null);
  return {
    variant: v.name,
    round,
    ...result,
    startMs: s.startMs,
    crashed: !!crashed,
    peakRssMB: Math.max(peakRss, hwm) / 1024,
    serverUsPerReq: usPerReq(ticks('server')),
    pgUsPerReq: usPerReq(ticks('pg')),
    loadUsPerReq: usPerReq(ticks('load')),
    pgBackends: pgPids.length,
    machineBusyPct: (100 * busy) / total,
    othersDuringPct: (100 * others) / total,
    othersBeforePct: othersBefore,
    load1: Number((await import('node:fs')).readFileSync('/proc/loadavg', 'utf8').split(' ')[0]),
  };
}

const runs = [];
const rounds = Number(o.rounds);
const stamp = new Date().toISOString().replace(/[:.]/g, '-');
console.log(
  `# scenario ${o.scenario}: ${variants.map((v) => v.name).join(', ')}; ${rounds} rounds × (${o.warmup} s warm-up + ${o.duration} s), ${o.connections} connections`,
);
for (let r = 1; r <= rounds; r++) {
  for (const v of variants) {
    const x = await oneRun(v, r);
    runs.push(x);
    console.log(
      `round ${r} ${v.name.padEnd(20)} ${x.rps.toFixed(0).padStart(6)} req/s  p50 ${x.p50.toFixed(2)}  p99 ${x.p99.toFixed(2)} ms  non2xx ${x.non2xx} bad ${x.badBody} err ${x.errors}  RSS ${x.peakRssMB.toFixed(0)} MB  server ${x.serverUsPerReq.toFixed(0)} µs/req  pg ${x.pgUsPerReq.toFixed(0)} µs/req  others ${x.othersBeforePct.toFixed(1)}%/${x.othersDuringPct.toFixed(1)}%`,
    );
  }
}
await mon.end();
const file = `${o.out}/${o.scenario}-${stamp}.json`;
writeFileSync(
  file,
  JSON.stringify(
    {
      scenario: o.scenario,
      options: o,
      variants: variants.map((v) => ({ name: v.name, describe: v.describe, node: v.node })),
      runs,
    },
    null,
    1,
  ),
);
console.log(`# raw runs: ${file}`);
const { summarize } = await import('./summarize.mjs');
console.log(summarize({ scenario: o.scenario, runs, variants: variants.map((v) => v.name) }));
