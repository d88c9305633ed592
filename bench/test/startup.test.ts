// The CLI start-up measurement of `npm run bench`: what is spawned, in which order, how
// rounds become ratios, the two targets and the report section. Nothing here is timed.

import { describe, expect, it } from 'vitest';
import type { Measured } from '../report-model.js';
import { startupSection } from '../report-markdown.js';
import {
  STARTUP_COMMANDS,
  startupArgs,
  startupOrder,
  summarizeStartup,
  type StartupReport,
} from '../startup.js';
import { startupTargets } from '../targets.js';

describe('startupArgs', () => {
  it('spawns a bare node, rest --help, and auth policy list on the given database', () => {
    expect(startupArgs('/r/dist/cli/main.js', 'sqlite:///tmp/s.db')).toEqual({
      bare: ['-e', '0'],
      help: ['/r/dist/cli/main.js', '--help'],
      list: ['/r/dist/cli/main.js', '-db.url', 'sqlite:///tmp/s.db', 'auth', 'policy', 'list'],
    });
  });
});

describe('startupOrder', () => {
  it('runs every command once per round and lets each go first in turn', () => {
    const rounds = [0, 1, 2, 3].map(startupOrder);
    for (const order of rounds) expect([...order].sort()).toEqual([...STARTUP_COMMANDS].sort());
    expect(rounds.map((o) => o[0])).toEqual(['bare', 'help', 'list', 'bare']);
    expect(rounds[1]).toEqual(['help', 'list', 'bare']);
  });
});

describe('summarizeStartup', () => {
  it('takes the ratio round by round, not the ratio of the medians', () => {
    const report = summarizeStartup([
      { bare: 40, help: 80, list: 200 },
      { bare: 100, help: 150, list: 300 },
      { bare: 50, help: 200, list: 250 },
    ]);
    expect(report.rounds).toBe(3);
    expect(report.ms.bare).toEqual({ median: 50, min: 40, max: 100 });
    expect(report.help).toEqual({ median: 2, min: 1.5, max: 4 });
    // Medians alone would say 200 ÷ 50 = 4.
    expect(report.list).toEqual({ median: 5, min: 3, max: 5 });
  });
});

const measured = (help: number, list: number): Measured<StartupReport> => ({
  ok: true,
  value: summarizeStartup([{ bare: 50, help: 50 * help, list: 50 * list }]),
});

describe('startupTargets', () => {
  it('meets --help at 3× and auth policy list at 6×, and misses above', () => {
    expect(startupTargets(measured(3, 6)).map((t) => t.met)).toEqual([true, true]);
    expect(startupTargets(measured(3.01, 5)).map((t) => t.met)).toEqual([false, true]);
    expect(startupTargets(measured(2, 6.5)).map((t) => t.met)).toEqual([true, false]);
  });

  it('names the command and the limit, and says what was measured', () => {
    const [help, list] = startupTargets(measured(2, 4));
    expect(help?.target).toBe('`rest --help` starts within 3× a bare `node -e 0`');
    expect(help?.measured).toBe('2.00× (2.00–2.00); 100 ms vs 50 ms');
    expect(list?.target).toBe('`rest auth policy list` on SQLite starts within 6× a bare `node -e 0`');
  });

  it('misses both, with the reason, when the measurement failed or did not run', () => {
    const failed = startupTargets({ ok: false, reason: 'dist/cli/main.js does not exist' });
    expect(failed.map((t) => [t.met, t.measured])).toEqual([
      [false, 'not measured: dist/cli/main.js does not exist'],
      [false, 'not measured: dist/cli/main.js does not exist'],
    ]);
    expect(startupTargets(undefined).map((t) => t.met)).toEqual([false, false]);
  });
});

describe('startupSection', () => {
  it('shows each command with its time, its ratio and its target', () => {
    const text = startupSection(measured(2, 4));
    expect(text).toContain('## CLI start-up');
    expect(text).toContain('| `node -e 0` | 50 (50–50) | 1 |  |');
    expect(text).toContain('| `rest --help` | 100 (100–100) | 2.00× (2.00–2.00) | ≤ 3× |');
    expect(text).toContain(
      '| `rest auth policy list` (SQLite, 3 policies) | 200 (200–200) | 4.00× (4.00–4.00) | ≤ 6× |',
    );
  });

  it('says why when it was not measured', () => {
    expect(startupSection({ ok: false, reason: 'exit 3' })).toContain('**Not measured**: exit 3');
    expect(startupSection(undefined)).toContain('Not measured in this run.');
  });
});
