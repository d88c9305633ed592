// The orchestrator's handle on the load driver process: fork it, send loads, await results.

import { fork, type ChildProcess } from 'node:child_process';
import type { DriverCommand, DriverReply, LoadResult, LoadSpec } from './driver-protocol.js';

export interface Driver {
  readonly pid: number;
  run(loads: readonly LoadSpec[]): Promise<readonly LoadResult[]>;
  close(): Promise<void>;
}

export async function startDriver(driverScript: string): Promise<Driver> {
  const child: ChildProcess = fork(driverScript, [], {
    execArgv: [],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const pending = new Map<
    number,
    { resolve: (r: readonly LoadResult[]) => void; reject: (e: Error) => void }
  >();
  let nextRunId = 1;
  let exited = false;

  const ready = new Promise<void>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) =>
      reject(new Error(`load driver exited with code ${String(code)} before it was ready`)),
    );
    child.on('message', (message: DriverReply) => {
      switch (message.kind) {
        case 'ready':
          resolve();
          return;
        case 'done':
          pending.get(message.runId)?.resolve(message.results);
          pending.delete(message.runId);
          return;
        case 'failed':
          pending.get(message.runId)?.reject(new Error(`load driver: ${message.message}`));
          pending.delete(message.runId);
          return;
      }
    });
  });
  child.on('exit', (code) => {
    exited = true;
    for (const p of pending.values()) p.reject(new Error(`load driver exited with code ${String(code)}`));
    pending.clear();
  });
  await ready;
  const pid = child.pid;
  if (pid === undefined) throw new Error('load driver has no pid');

  const send = (command: DriverCommand): void => {
    child.send(command);
  };
  return {
    pid,
    run: (loads) => {
      if (exited) return Promise.reject(new Error('load driver is not running'));
      const runId = nextRunId++;
      return new Promise((resolve, reject) => {
        pending.set(runId, { resolve, reject });
        send({ kind: 'run', runId, loads });
      });
    },
    close: async () => {
      if (exited) return;
      const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      send({ kind: 'exit' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await gone;
      clearTimeout(timer);
    },
  };
}
