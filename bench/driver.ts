// The load driver: a separate process (forked by bench/run.ts) that runs load windows on command
// (bench/load.ts) and answers with throughput, status counts and latency percentiles of each.

import { assertNever } from '../errors/rest-error.js';
import type { DriverCommand, DriverReply } from './driver-protocol.js';
import { runTogether } from './load.js';

function reply(message: DriverReply): void {
  process.send?.(message);
}

process.on('message', (message: DriverCommand) => {
  switch (message.kind) {
    case 'run':
      runTogether(message.loads).then(
        (results) => reply({ kind: 'done', runId: message.runId, results }),
        (e: unknown) =>
          reply({
            kind: 'failed',
            runId: message.runId,
            message: e instanceof Error ? e.message : String(e),
          }),
      );
      return;
    case 'exit':
      process.disconnect();
      return;
    default:
      assertNever(message, 'driver command');
  }
});

if (process.send === undefined) {
  console.error('bench/driver.js is started by bench/run.js through child_process.fork');
  process.exit(1);
}
reply({ kind: 'ready' });
