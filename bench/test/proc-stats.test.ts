// The bench's readings of the machine: how busy other work keeps the CPU while the bench waits.

import { spawn } from 'node:child_process';
import { cpus } from 'node:os';
import { describe, expect, it } from 'vitest';
import { machineBusyShare } from '../proc-stats.js';

describe('machineBusyShare', () => {
  it('is a share between 0 and 1', async () => {
    const share = await machineBusyShare(200);
    expect(share).toBeGreaterThanOrEqual(0);
    expect(share).toBeLessThanOrEqual(1);
  });

  it('sees a process that keeps one core busy', async () => {
    const spinner = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
    try {
      await new Promise((resolve) => setTimeout(resolve, 200));
      // One core of n fully busy is 1/n of the machine; allow for the scheduler's share of it.
      expect(await machineBusyShare(500)).toBeGreaterThan(0.7 / cpus().length);
    } finally {
      spinner.kill('SIGKILL');
    }
  });
});
