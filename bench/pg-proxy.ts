// A counting TCP proxy in front of PostgreSQL: it forwards bytes untouched and reads the
// protocol's message frames to count, per connection after its startup (first ReadyForQuery),
// the client's messages and its "flights" — bursts of client messages sent after the server
// last spoke. A flight is one round trip: the client had to hear from the server before it
// sent again. Pipelined statements are one flight; BEGIN; SET; SELECT; COMMIT sent one by one
// are four. https://www.postgresql.org/docs/15/protocol-message-formats.html

import { createServer, connect, type Server, type Socket } from 'node:net';

export interface PgTrafficCounts {
  readonly connections: number;
  /** Round trips: client bursts after a server answer (Terminate-only bursts excluded). */
  readonly flights: number;
  /** Client messages after startup (Terminate excluded). */
  readonly messages: number;
  /** Simple-protocol Query messages ('Q'). */
  readonly queries: number;
  /** Extended-protocol Sync messages ('S'): one per statement outside pipelines' batching. */
  readonly syncs: number;
  /** Extended-protocol Execute messages ('E'): the statements run, pipelined or not. */
  readonly executes: number;
}

export interface PgCountingProxy {
  /** `targetUrl` with host and port replaced by the proxy's. */
  readonly url: string;
  counts(): PgTrafficCounts;
  close(): Promise<void>;
}

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const TYPE_READY_FOR_QUERY = 0x5a; // 'Z'
const TYPE_TERMINATE = 0x58; // 'X'
const TYPE_QUERY = 0x51; // 'Q'
const TYPE_SYNC = 0x53; // 'S'
const TYPE_EXECUTE = 0x45; // 'E'

/** Walks typed frames (1 type byte + int32 length including itself) without copying bodies. */
class FrameWalker {
  #skip = 0;
  #header: Buffer = Buffer.alloc(0);
  readonly #onMessage: (type: number) => void;

  constructor(onMessage: (type: number) => void) {
    this.#onMessage = onMessage;
  }

  push(chunk: Buffer): void {
    let i = 0;
    while (i < chunk.length) {
      if (this.#skip > 0) {
        const n = Math.min(this.#skip, chunk.length - i);
        this.#skip -= n;
        i += n;
        continue;
      }
      const take = chunk.subarray(i, i + (5 - this.#header.length));
      this.#header = Buffer.concat([this.#header, take]);
      i += take.length;
      if (this.#header.length === 5) {
        const type = this.#header[0] ?? 0;
        this.#skip = this.#header.readInt32BE(1) - 4;
        this.#header = Buffer.alloc(0);
        this.#onMessage(type);
      }
    }
  }
}

interface Totals {
  connections: number;
  flights: number;
  messages: number;
  queries: number;
  syncs: number;
  executes: number;
}

function track(client: Socket, server: Socket, totals: Totals): void {
  let ready = false;
  let opaque = false;
  let lastSpeaker: 'client' | 'server' = 'server';
  let startup: Buffer | undefined = Buffer.alloc(0);
  let serverSingleBytes = 0;

  const clientFrames = new FrameWalker((type) => {
    if (!ready || type === TYPE_TERMINATE) return;
    totals.messages++;
    if (type === TYPE_QUERY) totals.queries++;
    if (type === TYPE_SYNC) totals.syncs++;
    if (type === TYPE_EXECUTE) totals.executes++;
    if (lastSpeaker === 'server') totals.flights++;
    lastSpeaker = 'client';
  });
  const serverFrames = new FrameWalker((type) => {
    if (type === TYPE_READY_FOR_QUERY) ready = true;
  });

  // The first client message(s) are untyped: int32 length, int32 code (startup, SSL or GSS request).
  const onClientData = (chunk: Buffer): void => {
    if (opaque) return;
    if (startup === undefined) {
      clientFrames.push(chunk);
      return;
    }
    startup = Buffer.concat([startup, chunk]);
    while (startup !== undefined && startup.length >= 8) {
      const length = startup.readInt32BE(0);
      if (startup.length < length) return;
      const code = startup.readInt32BE(4);
      const rest: Buffer = startup.subarray(length);
      if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
        serverSingleBytes++;
        startup = rest;
      } else {
        startup = undefined;
        if (rest.length > 0) clientFrames.push(rest);
      }
    }
  };
  const onServerData = (chunk: Buffer): void => {
    if (opaque) return;
    lastSpeaker = 'server';
    let data = chunk;
    while (serverSingleBytes > 0 && data.length > 0) {
      serverSingleBytes--;
      // 'S' or 'G': the connection switches to TLS/GSS and cannot be read any further.
      if (data[0] !== 0x4e) opaque = true;
      data = data.subarray(1);
    }
    if (!opaque && data.length > 0) serverFrames.push(data);
  };

  client.on('data', (chunk: Buffer) => {
    onClientData(chunk);
    server.write(chunk);
  });
  server.on('data', (chunk: Buffer) => {
    onServerData(chunk);
    client.write(chunk);
  });
}

export async function startPgCountingProxy(targetUrl: string): Promise<PgCountingProxy> {
  const target = new URL(targetUrl);
  const targetHost = target.hostname || '127.0.0.1';
  const targetPort = Number(target.port || 5432);
  const totals: Totals = { connections: 0, flights: 0, messages: 0, queries: 0, syncs: 0, executes: 0 };
  const sockets = new Set<Socket>();

  const proxy: Server = createServer((client) => {
    totals.connections++;
    const server = connect(targetPort, targetHost);
    sockets.add(client).add(server);
    client.setNoDelay(true);
    server.setNoDelay(true);
    track(client, server, totals);
    const closeBoth = (): void => {
      client.destroy();
      server.destroy();
      sockets.delete(client);
      sockets.delete(server);
    };
    client.on('close', closeBoth).on('error', closeBoth);
    server.on('close', closeBoth).on('error', closeBoth);
  });
  await new Promise<void>((resolve, reject) => {
    proxy.once('error', reject);
    proxy.listen(0, '127.0.0.1', () => resolve());
  });
  const address = proxy.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const url = new URL(targetUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.toString(),
    counts: () => ({ ...totals }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        proxy.close(() => resolve());
      }),
  };
}
