// `npm run bench:render`: rewrites BENCHMARKS.md from the last run's bench/results.json without
// running anything, for a change to the report's layout.

import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchReport } from './report-model.js';
import { renderMarkdown } from './report-markdown.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const report = JSON.parse(readFileSync(join(repoRoot, 'bench', 'results.json'), 'utf8')) as BenchReport;
writeFileSync(join(repoRoot, 'BENCHMARKS.md'), renderMarkdown(report, 'bench/chart.svg'));
console.log(`wrote ${join(repoRoot, 'BENCHMARKS.md')} from bench/results.json`);
