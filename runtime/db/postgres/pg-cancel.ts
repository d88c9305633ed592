// Cancelling the statement a backend runs, as pg's own Client#cancel does: a short connection of
// its own that sends a CancelRequest with the backend's process id and secret key
// (https://www.postgresql.org/docs/current/protocol-flow.html#PROTOCOL-FLOW-CANCELING-REQUESTS).
// It needs no pool slot and no login, so it works while every pooled connection is busy. pg's
// method cancels only its client's active query, which a pipelined client does not track.
// PostgreSQL cancels whatever the backend is running when the signal arrives and ignores it while
// the backend waits for a command: callers send nothing new on that backend until it resolves.

import pg from 'pg';

/** The pg Connection methods used here (pg ships no types for them). */
interface CancelConnection {
  readonly stream: { destroy(): void };
  connect(portOrPath: number | string, host?: string): void;
  cancel(processID: number, secretKey: number): void;
  once(event: 'connect' | 'end' | 'error', listener: (...args: unknown[]) => void): void;
  on(event: 'error', listener: (...args: unknown[]) => void): void;
}

interface BackendKey {
  readonly processID?: number | null;
  readonly secretKey?: number | null;
}

/** The cancel connection is given up after this long: the caller then stops waiting for it. */
const CANCEL_WAIT_MS = 2000;

/**
 * Sends a CancelRequest for the backend of `target`, connecting as `config` says; resolves once the
 * server closed that connection (it has signalled the backend by then), or failed, or after
 * CANCEL_WAIT_MS. Never rejects.
 */
export function cancelBackend(config: pg.ClientConfig, target: pg.ClientBase): Promise<void> {
  const { processID, secretKey } = target as unknown as BackendKey;
  if (processID === undefined || processID === null || secretKey === undefined || secretKey === null) {
    return Promise.resolve();
  }
  const canceller = new pg.Client(config) as unknown as {
    readonly connection: CancelConnection;
    readonly host: string;
    readonly port: number;
  };
  const con = canceller.connection;
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      con.stream.destroy();
      resolve();
    }, CANCEL_WAIT_MS);
    const done = (): void => {
      clearTimeout(timer);
      resolve();
    };
    con.on('error', done);
    con.once('end', done);
    con.once('connect', () => con.cancel(processID, secretKey));
    const { host, port } = canceller;
    if (host.startsWith('/')) con.connect(`${host}/.s.PGSQL.${port}`);
    else con.connect(port, host);
  });
}
