// Start/stop one server process (by its own PID only), HTTP helper, /proc readers.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { PEERS } from './variants.mjs';

export async function startServer(v, logFile) {
  const { openSync } = await import('node:fs');
  const out = openSync(logFile ?? `${PEERS}/logs/${v.name}.log`, 'a');
  const proc = spawn(v.node, v.cmd, {
    cwd: PEERS,
    env: { ...process.env, ...v.env, NODE_ENV: 'production' },
    stdio: ['ignore', out, out],
  });
  let exited = null;
  proc.on('exit', (code, sig) => {
    exited = { code, sig };
  });
  const t0 = Date.now();
  for (;;) {
    if (exited) throw new Error(`${v.name} exited during start (${JSON.stringify(exited)}); see its log`);
    try {
      const r = await fetch(`http://127.0.0.1:${v.port}/`, { signal: AbortSignal.timeout(1000) });
      await r.arrayBuffer();
      break; // any HTTP answer means it listens
    } catch {
      /* not yet */
    }
    if (Date.now() - t0 > 60_000) {
      proc.kill('SIGKILL');
      throw new Error(`${v.name} did not listen within 60 s`);
    }
    await sleep(100);
  }
  return { proc, pid: proc.pid, startMs: Date.now() - t0, exited: () => exited };
}

export async function stopServer(s) {
  if (s.exited()) return;
  const done = new Promise((r) => s.proc.once('exit', r));
  process.kill(s.pid, 'SIGTERM');
  const t = await Promise.race([done.then(() => 'ok'), sleep(8000).then(() => 'timeout')]);
  if (t === 'timeout' && !s.exited()) {
    process.kill(s.pid, 'SIGKILL');
    await done;
  }
}

export async function http(v, req, token) {
  const headers = { ...(req.headers ?? {}) };
  if (token) headers.authorization = `Bearer ${token}`;
  const r = await fetch(`http://127.0.0.1:${v.port}${req.path}`, {
    method: req.method,
    headers,
    body: req.body,
  });
  const text = await r.text();
  let body = null;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: r.status, body, text };
}

// /proc helpers -------------------------------------------------------------------------------
export const HZ = 100;
export function procCpu(pid) {
  // utime+stime in clock ticks, or null
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]);
  } catch {
    return null;
  }
}
export function procStatus(pid, field) {
  // kB
  try {
    const m = readFileSync(`/proc/${pid}/status`, 'utf8').match(new RegExp(`^${field}:\\s+(\\d+)`, 'm'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}
export function machineCpu() {
  // { busy, total } in ticks over all cores
  const l = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const idle = l[3] + l[4];
  const total = l.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: total - idle, total };
}
