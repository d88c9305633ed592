// The README's chart, hand-written SVG without dependencies: read req/s and read p99 per
// contender (median bars, min–max whiskers over rounds); failed contenders are labelled, not dropped.

import type { ContenderId, ScenarioRow } from './report-model.js';

const COLORS: Readonly<Record<ContenderId, string>> = {
  baseline: '#7f8c8d',
  'rest-pg-portable': '#2e86de',
  'rest-pg-rls': '#10ac84',
  'rest-sqlite': '#e67e22',
};

interface Bar {
  readonly label: string;
  readonly color: string;
  readonly value: number | null;
  readonly min: number;
  readonly max: number;
  readonly failure: string | null;
}

const WIDTH = 960;
const HEIGHT = 420;
const PANEL_WIDTH = 450;
const TOP = 64;
const BOTTOM = 100;
const LEFT = 64;

const escapeXml = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function niceStep(max: number): number {
  const raw = max / 5;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const normalized = raw / magnitude;
  const nice = normalized <= 1 ? 1 : normalized <= 2 ? 2 : normalized <= 2.5 ? 2.5 : normalized <= 5 ? 5 : 10;
  return nice * magnitude;
}

const formatValue = (v: number): string =>
  v >= 100 ? Math.round(v).toLocaleString('en-US') : v.toFixed(v >= 10 ? 1 : 2);

const formatTick = (v: number, step: number): string =>
  v.toLocaleString('en-US', { maximumFractionDigits: step >= 1 ? 0 : Math.ceil(-Math.log10(step)) });

function panel(x0: number, title: string, unit: string, bars: readonly Bar[]): string {
  const plotHeight = HEIGHT - TOP - BOTTOM;
  const plotWidth = PANEL_WIDTH - LEFT;
  const top = Math.max(1e-9, ...bars.map((b) => (b.value === null ? 0 : Math.max(b.value, b.max))));
  const step = niceStep(top * 1.1);
  const scaleMax = Math.ceil((top * 1.1) / step) * step;
  const y = (v: number): number => TOP + plotHeight - (v / scaleMax) * plotHeight;
  const out: string[] = [
    `<text x="${x0 + LEFT + plotWidth / 2}" y="${TOP - 30}" text-anchor="middle" class="title">${escapeXml(title)}</text>`,
  ];
  for (let v = 0; v <= scaleMax + step / 2; v += step) {
    out.push(
      `<line x1="${x0 + LEFT}" x2="${x0 + PANEL_WIDTH}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" class="grid"/>`,
      `<text x="${x0 + LEFT - 6}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end" class="tick">${escapeXml(formatTick(v, step))}</text>`,
    );
  }
  out.push(
    `<text transform="translate(${x0 + 14},${TOP + plotHeight / 2}) rotate(-90)" text-anchor="middle" class="tick">${escapeXml(unit)}</text>`,
  );
  const slot = plotWidth / Math.max(1, bars.length);
  const barWidth = Math.min(64, slot * 0.6);
  bars.forEach((bar, i) => {
    const cx = x0 + LEFT + slot * i + slot / 2;
    const labelY = TOP + plotHeight + 18;
    bar.label.split('\n').forEach((line, k) => {
      out.push(
        `<text x="${cx}" y="${labelY + k * 15}" text-anchor="middle" class="label">${escapeXml(line)}</text>`,
      );
    });
    if (bar.value === null) {
      out.push(
        `<text x="${cx}" y="${TOP + plotHeight - 8}" text-anchor="middle" class="failed">failed</text>`,
        `<title>${escapeXml(bar.failure ?? 'failed')}</title>`,
      );
      return;
    }
    const yTop = y(bar.value);
    out.push(
      `<rect x="${(cx - barWidth / 2).toFixed(1)}" y="${yTop.toFixed(1)}" width="${barWidth.toFixed(1)}" height="${(TOP + plotHeight - yTop).toFixed(1)}" fill="${bar.color}"/>`,
      `<line x1="${cx}" x2="${cx}" y1="${y(bar.min).toFixed(1)}" y2="${y(bar.max).toFixed(1)}" class="whisker"/>`,
      `<line x1="${cx - 6}" x2="${cx + 6}" y1="${y(bar.min).toFixed(1)}" y2="${y(bar.min).toFixed(1)}" class="whisker"/>`,
      `<line x1="${cx - 6}" x2="${cx + 6}" y1="${y(bar.max).toFixed(1)}" y2="${y(bar.max).toFixed(1)}" class="whisker"/>`,
      `<text x="${cx}" y="${(Math.min(yTop, y(bar.max)) - 6).toFixed(1)}" text-anchor="middle" class="value">${escapeXml(formatValue(bar.value))}</text>`,
    );
  });
  return out.join('\n');
}

const shortLabel = (row: ScenarioRow): string => row.label.replace(/ /g, '\n');

export function renderChart(read: readonly ScenarioRow[], subtitle: string): string {
  const rpsBars: Bar[] = read.map((row) => {
    const values = row.rounds.map((r) => r.rps);
    return {
      label: shortLabel(row),
      color: COLORS[row.contender],
      value: row.outcome.ok ? row.outcome.value.rps.median : null,
      min: Math.min(...values),
      max: Math.max(...values),
      failure: row.outcome.ok ? null : row.outcome.reason,
    };
  });
  const p99Bars: Bar[] = read.map((row) => {
    const values = row.rounds.map((r) => r.p99Ms);
    return {
      label: shortLabel(row),
      color: COLORS[row.contender],
      value: row.outcome.ok ? row.outcome.value.p99Ms : null,
      min: Math.min(...values),
      max: Math.max(...values),
      failure: row.outcome.ok ? null : row.outcome.reason,
    };
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="system-ui, -apple-system, Segoe UI, sans-serif">
<style>
.title { font-size: 15px; font-weight: 600; fill: #222; }
.subtitle { font-size: 12px; fill: #555; }
.tick { font-size: 11px; fill: #666; }
.label { font-size: 12px; fill: #222; }
.value { font-size: 11px; fill: #222; }
.failed { font-size: 12px; fill: #c0392b; font-style: italic; }
.grid { stroke: #e5e5e5; stroke-width: 1; }
.whisker { stroke: #222; stroke-width: 1.2; }
</style>
<rect width="${WIDTH}" height="${HEIGHT}" fill="#ffffff"/>
<text x="${WIDTH / 2}" y="${HEIGHT - 12}" text-anchor="middle" class="subtitle">${escapeXml(subtitle)}</text>
${panel(0, 'Reads: median req/s (higher is better)', 'requests / s', rpsBars)}
${panel(WIDTH / 2, 'Reads: median p99 latency (lower is better)', 'ms', p99Bars)}
</svg>
`;
}
