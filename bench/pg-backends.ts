// CPU spent inside PostgreSQL for the bench database: the client backends connected to it
// (pg_stat_activity) and their utime+stime from /proc. Backends that exit during a window
// lose their time (pools are warm and long-lived, so this is rare); new ones count in full.

import pg from 'pg';
import { cpuMicros } from './proc-stats.js';

export type BackendCpu = ReadonlyMap<number, number>;

export interface PgBackendMeter {
  /** CPU µs per backend pid now, or undefined when /proc of the server is not readable. */
  sample(): Promise<BackendCpu | undefined>;
  close(): Promise<void>;
}

export async function openPgBackendMeter(databaseUrl: string, database: string): Promise<PgBackendMeter> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  return {
    sample: async () => {
      const { rows } = await client.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity
          WHERE datname = $1 AND backend_type = 'client backend' AND pid <> pg_backend_pid()`,
        [database],
      );
      const cpu = new Map<number, number>();
      for (const { pid } of rows) {
        const micros = cpuMicros(pid);
        if (micros !== undefined) cpu.set(pid, micros);
      }
      return rows.length > 0 && cpu.size === 0 ? undefined : cpu;
    },
    close: () => client.end(),
  };
}

/** CPU µs spent between two samples by the backends alive at the second one. */
export function backendCpuDelta(before: BackendCpu, after: BackendCpu): number {
  let total = 0;
  for (const [pid, micros] of after) total += micros - (before.get(pid) ?? 0);
  return total;
}
