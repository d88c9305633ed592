// Per-process resource readings from Linux /proc: CPU time (utime+stime) and peak RSS (VmHWM).

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

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
