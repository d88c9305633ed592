// express-shaped.ts over real HTTP: Node makes each request and response with the express app's
// prototypes already, so express's per-request setPrototypeOf changes nothing, and express
// behaves as usual (its request/response helpers, Node's classes underneath).

import { IncomingMessage, ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { createDrainingServer } from '../../../../runtime/http/draining-server.js';
import { expressShaped } from '../../../../runtime/http/express-shaped.js';

describe('expressShaped', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
    server = undefined;
  });

  it("makes requests and responses with the app's prototypes before express sees them", async () => {
    const app = express();
    app.set('trust proxy', true);
    app.get('/hello', (req, res) => {
      res.status(201).json({ ip: req.ip, agent: req.get('x-test'), path: req.path });
    });
    const arrived: { request: unknown; response: unknown; classes: boolean }[] = [];
    server = createDrainingServer(app, expressShaped(app)).server;
    // Before express's own listener: what Node made.
    server.prependListener('request', (req, res) => {
      arrived.push({
        request: Object.getPrototypeOf(req),
        response: Object.getPrototypeOf(res),
        classes: req instanceof IncomingMessage && res instanceof ServerResponse,
      });
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    for (const round of [1, 2]) {
      const res = await fetch(`http://127.0.0.1:${port}/hello?round=${round}`, {
        headers: { 'x-test': 'yes', 'x-forwarded-for': '203.0.113.7' },
      });
      expect(res.status).toBe(201);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(await res.json()).toEqual({ ip: '203.0.113.7', agent: 'yes', path: '/hello' });
    }
    expect(arrived).toEqual([
      { request: app.request, response: app.response, classes: true },
      { request: app.request, response: app.response, classes: true },
    ]);
  });

  it('leaves a server without it as Node makes it', async () => {
    const app = express();
    app.get('/', (_req, res) => void res.json({ ok: true }));
    let arrivedWith: unknown;
    server = createDrainingServer(app).server;
    server.prependListener('request', (req) => void (arrivedWith = Object.getPrototypeOf(req)));
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    expect(await (await fetch(`http://127.0.0.1:${port}/`)).json()).toEqual({ ok: true });
    expect(arrivedWith).toBe(IncomingMessage.prototype);
  });
});
