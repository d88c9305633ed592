// One load run in its own process: autocannon, warm-up (discarded) then the measured window.
// argv[2]: JSON spec file {url, req:{method,path,headers,body}, bodies?, tokens[], connections,
// warmup, duration, expect}. Prints MEASURE_START / MEASURE_END lines, then one JSON result line.
import autocannon from 'autocannon';
import { readFileSync } from 'node:fs';

const spec = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const expectRe = new RegExp(spec.expect);

function options(duration, stats) {
  let i = Math.floor(Math.random() * spec.tokens.length);
  return {
    url: spec.url,
    connections: spec.connections,
    duration,
    pipelining: 1,
    timeout: 10,
    requests: [
      {
        method: spec.req.method,
        path: spec.req.path,
        setupRequest(req) {
          i = (i + 1) % spec.tokens.length;
          const headers = { ...(spec.req.headers ?? {}), authorization: `Bearer ${spec.tokens[i]}` };
          const body = spec.bodies ? spec.bodies[i] : spec.req.body;
          return { ...req, headers, body };
        },
        onResponse(status, body) {
          if (stats && status >= 200 && status < 300 && !expectRe.test(body)) stats.badBody++;
        },
      },
    ],
  };
}

function run(duration, stats) {
  return new Promise((resolve, reject) => {
    const inst = autocannon(options(duration, stats), (err, res) => (err ? reject(err) : resolve(res)));
    if (stats)
      inst.on('response', (_c, _s, _b, rt) => {
        stats.lat.push(rt);
      });
  });
}

await run(spec.warmup, null);
const stats = { lat: [], badBody: 0 };
console.log('MEASURE_START');
const t0 = process.hrtime.bigint();
const res = await run(spec.duration, stats);
const secs = Number(process.hrtime.bigint() - t0) / 1e9;
console.log('MEASURE_END');
const lat = Float64Array.from(stats.lat).sort();
const q = (p) => (lat.length ? lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] : null);
console.log(
  JSON.stringify({
    requests: res.requests.total,
    seconds: secs,
    rps: res.requests.total / spec.duration,
    p50: q(0.5),
    p90: q(0.9),
    p99: q(0.99),
    max: lat.length ? lat[lat.length - 1] : null,
    non2xx: res.non2xx,
    errors: res.errors,
    timeouts: res.timeouts,
    badBody: stats.badBody,
    status: { '2xx': res['2xx'], '4xx': res['4xx'], '5xx': res['5xx'] },
  }),
);
