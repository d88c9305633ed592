// The one source of the "client gone" signal: a request's AbortSignal aborts when its connection
// closes before the response has been sent (the client gave up, a proxy timed out, the socket was
// reset). The request runner carries it to the adapter (RunContext.signal), which drops a request
// still waiting for a database connection and cancels a running statement.

import type { ServerResponse } from 'node:http';

/** Aborts when `res` closes unfinished: its client can no longer read the answer. */
export function clientGoneSignal(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  // Already gone (while the token or the body was read): 'close' has fired before.
  if (res.destroyed || res.socket?.destroyed === true) {
    controller.abort();
    return controller.signal;
  }
  res.once('close', () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}
