// Resource readings from Linux /proc and the OS: per-process CPU time (utime+stime) and peak RSS
// (VmHWM), and how busy the whole machine is.

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';

let ticksPerSecond: number | undefined;

/** USER_HZ of the kernel (100 almost everywhere); /proc/<pid>/stat counts CPU time in it. */
function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    const reported = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    ticksPerSecond = Number.isFinite(reported) && reported > 0 ? reported : 100;
  }
  return ticksPerSecond;
}

/** User + system CPU time of a process in µs, or undefined when it is gone or unreadable. */
export function cpuMicros(pid: number): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may hold spaces: split after the last ')'.
  // Fields after it start at field 3 (state); utime is field 14 and stime field 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) return undefined;
  return ((utime + stime) * 1e6) / clockTicks();
}

/** Peak resident set size (VmHWM) in bytes, or undefined when the process is gone. */
export function peakRssBytes(pid: number): number | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const match = /^VmHWM:\s+(\d+)\s+kB$/m.exec(status);
  return match?.[1] === undefined ? undefined : Number(match[1]) * 1024;
}

/** Busy and total CPU time summed over every core since boot (os.cpus(), in ms). */
function cpuTotals(): { readonly busy: number; readonly total: number } {
  let busy = 0;
  let total = 0;
  for (const { times } of cpus()) {
    const sum = times.user + times.nice + times.sys + times.irq + times.idle;
    busy += sum - times.idle;
    total += sum;
  }
  return { busy, total };
}

/**
 * The share of the machine's CPU (0–1, over all cores) in use during `ms`, sampled while the bench
 * itself runs nothing: other work on the machine. Unlike the load average it does not remember
 * the build that `npm run bench` ran just before.
 */
export async function machineBusyShare(ms = 2000): Promise<number> {
  const before = cpuTotals();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const after = cpuTotals();
  const total = after.total - before.total;
  return total > 0 ? (after.busy - before.busy) / total : 0;
}
