// How each contender talks to PostgreSQL: every server started fresh behind rest's counting
// proxy (read-only import of $REST_DIR/dist-bench/bench/pg-proxy.js; a round trip = a burst of client
// messages sent after the server last spoke) and, with log_statement = 'all' set on peerbench
// for the duration, the statements of one request from the server log.
// usage: node trace.mjs [names] [--requests 200] [--scenario read|write]
import pg from 'pg';
import { readFileSync, statSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { pick, sign } from './variants.mjs';
import { startServer, stopServer, http } from './lib.mjs';

const { values: o, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    requests: { type: 'string', default: '200' },
    scenario: { type: 'string', default: 'read' },
  },
});
const { startPgCountingProxy } = await import(`${process.env.REST_DIR}/dist-bench/bench/pg-proxy.js`);
const LOG = process.env.PG_LOG ?? '/var/log/postgresql/postgresql-15-main.log';
const admin = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
await admin.connect();
const N = Number(o.requests);
const write = o.scenario === 'write';
for (const v0 of pick(positionals[0])) {
  const proxy = await startPgCountingProxy('postgres://postgres@127.0.0.1:5432/peerbench');
  const hp = new URL(proxy.url).host;
  const swap = (s) => s.replace('127.0.0.1:5432', hp);
  const v = {
    ...v0,
    cmd: v0.cmd.map(swap),
    env: Object.fromEntries(Object.entries(v0.env).map(([k, x]) => [k, swap(x)])),
  };
  const s = await startServer(v);
  const req = (u) => (write ? v.insert(u) : v.read);
  for (let i = 0; i < 20; i++) await http(v, req(1 + i), await sign(v.claims(1 + i))); // warm
  const c0 = proxy.counts();
  for (let i = 0; i < N; i++) {
    const u = 1 + ((i * 7) % 1000);
    await http(v, req(u), await sign(v.claims(u)));
  }
  const c1 = proxy.counts();
  // statements of one request
  await admin.query("ALTER DATABASE peerbench SET log_statement = 'all'");
  await stopServer(s);
  const s2 = await startServer(v0);
  await http(v0, req(5), await sign(v0.claims(5)));
  const size = statSync(LOG).size;
  await http(v0, req(7), await sign(v0.claims(7)));
  await new Promise((r) => setTimeout(r, 300));
  await admin.query('ALTER DATABASE peerbench RESET log_statement');
  await stopServer(s2);
  await proxy.close();
  const lines = [];
  let keep = false; // a statement's continuation lines start with a tab
  for (const l of readFileSync(LOG, 'utf8').slice(size).split('\n')) {
    if (/^\s/.test(l)) {
      if (keep) lines[lines.length - 1] += ` ${l.trim()}`;
      continue;
    }
    keep = /@peerbench (LOG|DETAIL)/.test(l);
    if (keep) lines.push(l.replace(/^\S+ \S+ \S+ \[\d+\] /, ''));
  }
  for (let i = 0; i < lines.length; i++) lines[i] = lines[i].slice(0, 700);
  console.log(
    `\n### ${v.name}: ${((c1.flights - c0.flights) / N).toFixed(2)} round trips/request, ${((c1.messages - c0.messages) / N).toFixed(1)} protocol messages/request, ${c1.connections} connections opened`,
  );
  console.log(lines.map((l) => `    ${l}`).join('\n'));
}
await admin.end();
