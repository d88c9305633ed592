// A TCP proxy the outage test controls: stop() refuses new connections and cuts open ones (the
// database "goes down"), start() on the same port brings it back.

import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export class TcpProxy {
  readonly #targetHost: string;
  readonly #targetPort: number;
  #server: Server | undefined;
  readonly #sockets = new Set<Socket>();
  port = 0;

  constructor(targetHost: string, targetPort: number) {
    this.#targetHost = targetHost;
    this.#targetPort = targetPort;
  }

  async start(): Promise<number> {
    const server = createServer((client) => {
      const upstream = connect(this.#targetPort, this.#targetHost);
      for (const s of [client, upstream]) {
        this.#sockets.add(s);
        s.on('close', () => this.#sockets.delete(s));
        s.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.#server = server;
    return this.port;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    for (const s of this.#sockets) s.destroy();
    if (server !== undefined) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
