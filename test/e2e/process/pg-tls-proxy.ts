// A PostgreSQL front with SSL for a test server without it: answers a client's SSLRequest with
// 'S' and TLS (the certificate in ./tls is for "localhost", signed by ./tls/ca.pem), forwards a
// plain startup as it is, and passes the bytes on in the clear to the real server. It counts the
// connections of each kind, so a test can tell whether a client used TLS.
//
// ./tls was made with `openssl ca` (valid 2000–2100): a P-256 CA "rest test CA" (ca.pem) and a
// server certificate with subjectAltName DNS:localhost (server.pem, server.key).

import { readFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import type { Duplex } from 'node:stream';
import { TLSSocket } from 'node:tls';
import { fileURLToPath } from 'node:url';

export const TLS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'tls');
export const TEST_CA = join(TLS_DIR, 'ca.pem');

/** https://www.postgresql.org/docs/current/protocol-message-formats.html#PROTOCOL-MESSAGE-FORMATS-SSLREQUEST */
const SSL_REQUEST_CODE = 80877103;

const isSslRequest = (chunk: Buffer): boolean =>
  chunk.length === 8 && chunk.readInt32BE(0) === 8 && chunk.readInt32BE(4) === SSL_REQUEST_CODE;

export class PgTlsProxy {
  readonly #targetHost: string;
  readonly #targetPort: number;
  readonly #key = readFileSync(join(TLS_DIR, 'server.key'));
  readonly #cert = readFileSync(join(TLS_DIR, 'server.pem'));
  readonly #sockets = new Set<Duplex>();
  #server: Server | undefined;
  /** Connections that asked for SSL, and those that started in the clear. */
  readonly connections = { tls: 0, plain: 0 };
  port = 0;

  constructor(targetHost: string, targetPort: number) {
    this.#targetHost = targetHost;
    this.#targetPort = targetPort;
  }

  #track(...streams: Duplex[]): void {
    for (const s of streams) {
      this.#sockets.add(s);
      s.on('close', () => this.#sockets.delete(s));
      s.on('error', () => streams.forEach((other) => other.destroy()));
    }
  }

  #accept(client: Socket): void {
    this.#track(client);
    client.once('data', (first: Buffer) => {
      const upstream = connect(this.#targetPort, this.#targetHost);
      if (isSslRequest(first)) {
        this.connections.tls++;
        client.write('S');
        const secure = new TLSSocket(client, { isServer: true, key: this.#key, cert: this.#cert });
        this.#track(secure, upstream);
        secure.pipe(upstream).pipe(secure);
      } else {
        this.connections.plain++;
        this.#track(upstream);
        upstream.write(first);
        client.pipe(upstream).pipe(client);
      }
    });
  }

  async start(): Promise<number> {
    const server = createServer((client) => this.#accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
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
