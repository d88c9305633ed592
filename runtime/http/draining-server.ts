// An HTTP server whose shutdown drops no request (docs/operations.md): drain() stops accepting, answers every
// request on the connections already accepted (also those whose request was not read yet) with
// `Connection: close`, closes connections still without a request after a short wait, and cuts
// whatever is left at the deadline.

import {
  createServer,
  type RequestListener,
  type Server,
  type ServerOptions,
  type ServerResponse,
} from 'node:http';
import { Server as NetServer } from 'node:net';

export interface DrainOptions {
  /** From the start of the drain until every connection is cut, whatever it is doing. */
  readonly graceMs: number;
  /**
   * How often connections without a request in progress are closed, from when the listening
   * socket is closed (the first time after this).
   */
  readonly idleMs: number;
  /** Called once the listening socket is closed. */
  readonly stoppedAccepting?: () => void;
}

export interface DrainingServer {
  readonly server: Server;
  /** Resolves when the last connection has closed. */
  drain(options: DrainOptions): Promise<void>;
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** `options` go to Node's createServer (e.g. express-shaped.ts's request and response classes). */
export function createDrainingServer(listener: RequestListener, options: ServerOptions = {}): DrainingServer {
  let draining = false;
  // Responses begun before the drain: those not yet started get `Connection: close` when it begins.
  const open = new Set<ServerResponse>();
  const server = createServer(options, (req, res) => {
    if (draining) res.setHeader('connection', 'close');
    else {
      open.add(res);
      res.once('close', () => open.delete(res));
    }
    listener(req, res);
  });

  /**
   * Connections the kernel completed before the drain wait in the listen backlog, and closing the
   * listening socket would reset them. libuv accepts one of them per turn of the event loop: turn
   * it until a turn accepts none (for at most `ms` while new ones keep coming, or the server is
   * slow to turn).
   */
  const acceptBacklog = async (ms: number): Promise<void> => {
    let accepted = 0;
    const count = (): void => void accepted++;
    server.on('connection', count);
    const until = performance.now() + ms;
    // To the end of this turn; from there, each turn polls the listening socket once.
    await nextTurn();
    let before: number;
    do {
      before = accepted;
      await nextTurn();
    } while (accepted !== before && performance.now() < until);
    server.off('connection', count);
  };

  const drain = async ({ graceMs, idleMs, stoppedAccepting }: DrainOptions): Promise<void> => {
    draining = true;
    for (const res of open) if (!res.headersSent) res.setHeader('connection', 'close');
    open.clear();
    const cut = setTimeout(() => server.closeAllConnections(), graceMs);
    await acceptBacklog(graceMs / 2);
    const closed = new Promise<void>((resolve) => {
      // http.Server#close also closes idle connections (Node ≥ 19,
      // https://nodejs.org/api/http.html#serverclosecallback), and to Node a connection whose
      // request has not been read yet is idle: close only the listening socket, as net.Server does.
      NetServer.prototype.close.call(server, () => resolve());
    });
    stoppedAccepting?.();
    // Timers run before the poll phase reads the sockets: sweeping from the check phase that
    // follows it, a request that has arrived is always read first, and its connection is busy.
    const idle = setInterval(() => setImmediate(() => server.closeIdleConnections()), idleMs);
    await closed;
    clearInterval(idle);
    clearTimeout(cut);
  };

  return { server, drain };
}
