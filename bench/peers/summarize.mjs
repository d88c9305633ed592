// Summary table of a bench.mjs result file (or of runs in memory): medians, min–max, per-round ratios.
import { readFileSync } from 'node:fs';

const med = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  return n ? (n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2) : NaN;
};
const f0 = (x) => (Number.isFinite(x) ? x.toFixed(0) : '–');
const f1 = (x) => (Number.isFinite(x) ? x.toFixed(1) : '–');
const f2 = (x) => (Number.isFinite(x) ? x.toFixed(2) : '–');
const range = (xs, f) => `${f(med(xs))} [${f(Math.min(...xs))}–${f(Math.max(...xs))}]`;

function ratios(runs, name, ref) {
  const out = [];
  for (const r of runs.filter((x) => x.variant === name)) {
    const b = runs.find((x) => x.variant === ref && x.round === r.round);
    if (b) out.push(r.rps / b.rps);
  }
  return out.length ? range(out, f2) : '–';
}

export function summarize({ scenario, runs, variants }) {
  const lines = [];
  const refs = ['express', 'rest-native'].filter((r) => variants.includes(r));
  lines.push(`## ${scenario}: median [min–max] over ${Math.max(...runs.map((r) => r.round))} rounds`);
  lines.push(
    `| variant | req/s | p50 ms | p99 ms | non-2xx+bad | peak RSS MB | server µs/req | pg µs/req | ${refs.map((r) => `× ${r}`).join(' | ')} | others idle/during % |`,
  );
  lines.push(`|---|---|---|---|---|---|---|---|${refs.map(() => '---').join('|')}|---|`);
  for (const name of variants) {
    const rs = runs.filter((r) => r.variant === name);
    if (!rs.length) continue;
    lines.push(
      `| ${name} | ${range(
        rs.map((r) => r.rps),
        f0,
      )} | ${f2(med(rs.map((r) => r.p50)))} | ${range(
        rs.map((r) => r.p99),
        f1,
      )} | ${rs.reduce((a, r) => a + r.non2xx + r.badBody + r.errors, 0)} | ${f0(Math.max(...rs.map((r) => r.peakRssMB)))} | ${f0(med(rs.map((r) => r.serverUsPerReq)))} | ${f0(med(rs.map((r) => r.pgUsPerReq)))} | ${refs.map((ref) => ratios(runs, name, ref)).join(' | ')} | ${f1(med(rs.map((r) => r.othersBeforePct)))} / ${f1(med(rs.map((r) => r.othersDuringPct)))} (max ${f1(Math.max(...rs.map((r) => r.othersDuringPct)))}) |`,
    );
  }
  return lines.join('\n');
}

// usage: node summarize.mjs results/read-A.json [results/read-B.json …]  (several files of one
// scenario are pooled; their rounds are renumbered one after another)
if (import.meta.url === `file://${process.argv[1]}`) {
  const runs = [];
  let variants = [];
  let scenario;
  let offset = 0;
  for (const f of process.argv.slice(2)) {
    const d = JSON.parse(readFileSync(f, 'utf8'));
    scenario = d.scenario;
    for (const v of d.variants) if (!variants.includes(v.name)) variants.push(v.name);
    for (const r of d.runs) runs.push({ ...r, round: r.round + offset });
    offset += Math.max(...d.runs.map((r) => r.round));
  }
  console.log(summarize({ scenario, runs, variants }));
}
