// oneLayer over real HTTP: the handlers run in order within one express layer, and each way a
// handler can fail (next(error), a throw, a rejected promise, a throw after an await) reaches the
// error middleware, as it would were each handler a layer of its own.

import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { oneLayer } from '../../../../runtime/http/one-layer.js';

describe('oneLayer', () => {
  let server: Server;
  let base: string;
  const seen: string[] = [];

  const mark =
    (name: string): RequestHandler =>
    (_req, _res, next) => {
      seen.push(name);
      next();
    };
  const failing: RequestHandler = async (req, _res, next) => {
    const how = req.path.slice(1);
    if (how === 'next') return next(new Error('by next'));
    if (how === 'throw') throw new Error('by throw');
    if (how === 'reject') return Promise.reject(new Error('by rejection'));
    await new Promise((r) => setTimeout(r, 5));
    if (how === 'late') throw new Error('late, after an await');
    next();
  };

  beforeAll(async () => {
    const app = express();
    app.use(
      oneLayer([
        mark('first'),
        (req, res, next) => {
          seen.push('second');
          if (req.path === '/sync') throw new Error('thrown synchronously');
          if (req.path === '/ended') res.status(204).end();
          else next();
        },
        failing,
        (req, res) => {
          seen.push('last');
          res.json({ path: req.path });
        },
      ]),
    );
    app.use((req: Request, res: Response) => res.status(404).json({ unreached: req.path }));
    app.use((error: Error, _req: Request, res: Response, _next: NextFunction) => {
      res.status(500).json({ error: error.message });
    });
    server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const get = async (path: string) => {
    seen.length = 0;
    const res = await fetch(`${base}${path}`);
    return { status: res.status, body: res.status === 204 ? null : await res.json(), seen: [...seen] };
  };

  it('runs the handlers in order; the last one answers', async () => {
    expect(await get('/ok')).toEqual({
      status: 200,
      body: { path: '/ok' },
      seen: ['first', 'second', 'last'],
    });
  });

  it('stops where a handler answers without next()', async () => {
    expect(await get('/ended')).toEqual({ status: 204, body: null, seen: ['first', 'second'] });
  });

  it.each([
    ['next', 'by next'],
    ['throw', 'by throw'],
    ['reject', 'by rejection'],
    ['late', 'late, after an await'],
  ])('a failure by %s reaches the error middleware', async (how, message) => {
    expect(await get(`/${how}`)).toEqual({
      status: 500,
      body: { error: message },
      seen: ['first', 'second'],
    });
  });

  it('a handler that throws before calling next() reaches the error middleware', async () => {
    expect(await get('/sync')).toEqual({
      status: 500,
      body: { error: 'thrown synchronously' },
      seen: ['first', 'second'],
    });
  });

  it('next() from the last handler goes on to the next layer', async () => {
    const app = express();
    app.use(oneLayer([mark('only')]));
    app.use((req: Request, res: Response) => res.status(404).json({ next: req.path }));
    const other = app.listen(0, '127.0.0.1');
    await new Promise((r) => other.once('listening', r));
    try {
      const res = await fetch(`http://127.0.0.1:${(other.address() as AddressInfo).port}/x`);
      expect([res.status, await res.json()]).toEqual([404, { next: '/x' }]);
    } finally {
      await new Promise<void>((r) => other.close(() => r()));
    }
  });
});
