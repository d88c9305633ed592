// Where a server spends its CPU: start it fresh under --cpu-prof, load it (load.mjs, same spec as
// the bench) for a few seconds, stop it by PID (SIGTERM → the profile is written), then sum the
// self time by package / rest module and list the top functions.
// usage: node profile.mjs <variant>[,<variant>…] [--seconds 8]
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { pick, sign, PEERS } from './variants.mjs';
import { startServer, stopServer } from './lib.mjs';

const { values: o, positionals } = parseArgs({
  allowPositionals: true,
  options: { seconds: { type: 'string', default: '8' } },
});
const users = Array.from({ length: 1000 }, () => 1 + Math.floor(Math.random() * 1000));
function bucket(url) {
  if (!url) return '(native/builtin)';
  if (url.startsWith('node:') || !url.includes('/')) return `node:${url.replace(/^node:/, '').split('/')[0]}`;
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const p = url.slice(nm + 14).split('/');
    return p[0].startsWith('@') ? `${p[0]}/${p[1]}` : p[0];
  }
  const d = url.indexOf('/dist/');
  if (d >= 0)
    return `rest:${url
      .slice(d + 6)
      .split('/')
      .slice(0, 2)
      .join('/')}`;
  return url.split('/').slice(-2).join('/');
}
for (const v of pick(positionals[0])) {
  const dir = `${PEERS}/profiles/${v.name}`;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const pv = { ...v, cmd: [`--cpu-prof`, `--cpu-prof-dir=${dir}`, ...v.cmd] };
  const s = await startServer(pv);
  const spec = {
    url: `http://127.0.0.1:${v.port}`,
    req: v.read,
    tokens: await Promise.all(users.map((u) => sign(v.claims(u)))),
    connections: 32,
    warmup: 2,
    duration: Number(o.seconds),
    expect: '.',
  };
  writeFileSync(`${dir}.spec.json`, JSON.stringify(spec));
  const load = spawn(
    process.execPath,
    [new URL('./load.mjs', import.meta.url).pathname, `${dir}.spec.json`],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  load.stdout.on('data', (d) => {
    out += d;
  });
  await new Promise((r) => load.on('exit', r));
  await stopServer(s);
  const res = JSON.parse(out.trim().split('\n').pop());
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  const prof = JSON.parse(readFileSync(`${dir}/${file}`, 'utf8'));
  const dt = new Map(); // node id → self µs
  for (let i = 0; i < prof.samples.length; i++)
    dt.set(prof.samples[i], (dt.get(prof.samples[i]) ?? 0) + (prof.timeDeltas[i] ?? 0));
  const total = [...dt.values()].reduce((a, b) => a + b, 0);
  const byBucket = new Map(),
    byFn = new Map();
  for (const n of prof.nodes) {
    const t = dt.get(n.id) ?? 0;
    if (!t) continue;
    const cf = n.callFrame;
    const b =
      cf.functionName === '(idle)' ||
      cf.functionName === '(program)' ||
      cf.functionName === '(garbage collector)'
        ? cf.functionName
        : bucket(cf.url);
    byBucket.set(b, (byBucket.get(b) ?? 0) + t);
    const k = `${cf.functionName || '(anon)'} ${bucket(cf.url)}:${cf.lineNumber + 1}`;
    byFn.set(k, (byFn.get(k) ?? 0) + t);
  }
  const idle = byBucket.get('(idle)') ?? 0;
  const busy = total - idle;
  console.log(
    `\n### ${v.name}: ${res.rps.toFixed(0)} req/s under the profiler; busy ${(busy / 1e6).toFixed(2)} s of ${(total / 1e6).toFixed(2)} s sampled (main thread)`,
  );
  console.log('  self time by package/module (% of busy):');
  for (const [b, t] of [...byBucket]
    .filter(([b]) => b !== '(idle)')
    .sort((x, y) => y[1] - x[1])
    .slice(0, 14))
    console.log(`    ${((100 * t) / busy).toFixed(1).padStart(5)}%  ${b}`);
  console.log('  top functions (self, % of busy):');
  for (const [f, t] of [...byFn]
    .filter(([f]) => !f.startsWith('(idle)'))
    .sort((x, y) => y[1] - x[1])
    .slice(0, 15))
    console.log(`    ${((100 * t) / busy).toFixed(1).padStart(5)}%  ${f}`);
}
