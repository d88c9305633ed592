// Bar check: per-round ratio of one variant's req/s to another's, median over rounds, against a target.
// usage: node ratio.mjs <results.json> <variant> <reference> <target>   → exit 0 when median ≥ target
import { readFileSync } from 'node:fs';
const [file, name, ref, target] = process.argv.slice(2);
const d = JSON.parse(readFileSync(file, 'utf8'));
const rs = [];
for (const r of d.runs.filter((x) => x.variant === name)) {
  const b = d.runs.find((x) => x.variant === ref && x.round === r.round);
  if (b && b.rps > 0) rs.push(r.rps / b.rps);
}
rs.sort((a, b) => a - b);
const med = rs.length
  ? rs.length % 2
    ? rs[(rs.length - 1) / 2]
    : (rs[rs.length / 2 - 1] + rs[rs.length / 2]) / 2
  : NaN;
const ok = Number.isFinite(med) && med >= Number(target);
console.log(
  `${d.scenario}: ${name} ÷ ${ref} = ${med.toFixed(2)} (rounds ${rs.map((x) => x.toFixed(2)).join(' ')}; target ≥ ${target})${ok ? '' : ' — short'}`,
);
process.exit(ok ? 0 : 1);
