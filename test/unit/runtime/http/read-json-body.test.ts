// readJsonBody over real HTTP: a body in many chunks is read whole, one past the limit is 413
// whether or not it declares its length, one past the drain limit drops the connection, and a
// request that closes before its body ended, or before it was read at all, rejects instead of
// waiting for ever.

import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJsonBody } from '../../../../runtime/http/read-json-body.js';

const LIMITS = { maxBytes: 1000, maxDepth: 4 };

describe('readJsonBody', () => {
  let server: Server;
  let port: number;
  const outcomes: unknown[] = [];

  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res) => {
      // `x-read: twice` reads the body, then asks for it again from the ended stream; `x-read: late`
      // reads it only once the request has closed (as when its client left during authentication).
      const mode = req.headers['x-read'];
      const read =
        mode === 'twice'
          ? readJsonBody(req, LIMITS).then(() => readJsonBody(req, LIMITS))
          : mode === 'late'
            ? new Promise<void>((r) => req.once('close', r)).then(() => readJsonBody(req, LIMITS))
            : readJsonBody(req, LIMITS);
      read.then(
        (value) => {
          outcomes.push({ value });
          res.end(JSON.stringify({ value }));
        },
        (e: unknown) => {
          const code = (e as { code?: string }).code ?? (e as Error).message;
          outcomes.push({ error: code });
          if (!res.destroyed) res.end(JSON.stringify({ error: code }));
        },
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  /** Sends `chunks` one by one (chunked unless `length` is given) and resolves with the reply. */
  const send = (chunks: readonly string[], headers: Record<string, string> = {}) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        {
          port,
          host: '127.0.0.1',
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
        },
        (res) => {
          let body = '';
          res.on('data', (d: Buffer) => (body += d.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      for (const chunk of chunks) req.write(chunk);
      req.end();
    });

  it('reads a body sent in many chunks as one', async () => {
    const reply = await send(['{"a":', ' [1,', '2, ', '3]', '}']);
    expect(JSON.parse(reply.body)).toEqual({ value: { a: [1, 2, 3] } });
  });

  it('refuses a chunked body past the limit as payload_too_large (413), and one that declares too much', async () => {
    const reply = await send(['[', '"x",'.repeat(300), '"y"]']);
    expect(JSON.parse(reply.body)).toEqual({ error: 'payload_too_large' });
    const declared = JSON.stringify({ v: 'x'.repeat(1200) });
    const big = await send([declared], { 'content-length': String(Buffer.byteLength(declared)) });
    expect(JSON.parse(big.body)).toEqual({ error: 'payload_too_large' });
  });

  it('drops the connection past the drain limit (16 MiB)', async () => {
    const before = outcomes.length;
    const chunk = 'x'.repeat(1024 * 1024);
    // Past the limit the body is drained unkept; past 16 MiB the socket is destroyed and the
    // client's request fails.
    await expect(send(Array.from({ length: 17 }, () => chunk))).rejects.toThrow();
    expect(outcomes.slice(before)).toEqual([{ error: 'payload_too_large' }]);
  });

  it('a body already read is empty when asked for again, not a wait for an end that never comes', async () => {
    const reply = await send(['{"a":1}'], { 'x-read': 'twice' });
    expect(JSON.parse(reply.body)).toEqual({ error: 'invalid_json' });
  });

  it('rejects with client_gone when the request closes before its body ended', async () => {
    const before = outcomes.length;
    const req = request({
      port,
      host: '127.0.0.1',
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': '100' },
    });
    req.on('error', () => undefined);
    req.write('{"a":');
    await new Promise((r) => setTimeout(r, 50));
    req.destroy();
    for (let i = 0; i < 100 && outcomes.length === before; i++) await new Promise((r) => setTimeout(r, 10));
    expect(outcomes.slice(before)).toEqual([{ error: 'client_gone' }]);
  });

  it('rejects with client_gone when the request closed before its body was read, whole or not', async () => {
    for (const [length, sent] of [
      ['7', '{"a":1}'],
      ['100', '{"a":'],
    ] as const) {
      const before = outcomes.length;
      const req = request({
        port,
        host: '127.0.0.1',
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': length, 'x-read': 'late' },
      });
      req.on('error', () => undefined);
      req.write(sent);
      await new Promise((r) => setTimeout(r, 50));
      req.destroy();
      for (let i = 0; i < 100 && outcomes.length === before; i++) await new Promise((r) => setTimeout(r, 10));
      expect(outcomes.slice(before), `${sent} of ${length} bytes`).toEqual([{ error: 'client_gone' }]);
    }
  });
});
