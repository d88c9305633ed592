// sendJson over real HTTP, side by side with express's res.json on an app set up as rest's is
// (ETag off, no X-Powered-By): the same status, headers and bytes, for GET and for HEAD.

import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendJson } from '../../../../runtime/http/send-json.js';

const BODIES: Readonly<Record<string, unknown>> = {
  rows: [
    { id: 1, title: 'crème brûlée 🍮', done: false, note: null },
    { id: 2, title: 'a "quoted" \\ title\nwith a newline', done: true, note: 'x'.repeat(2000) },
  ],
  empty: [],
  error: { error: { code: 'not_found', message: 'no such row in items' } },
};

describe('sendJson', () => {
  const servers: Server[] = [];
  let ours: string;
  let theirs: string;

  const listen = async (app: express.Express): Promise<string> => {
    const server = app.listen(0, '127.0.0.1');
    servers.push(server);
    await new Promise((r) => server.once('listening', r));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };
  const app = (send: (res: express.Response, status: number, body: unknown) => void): express.Express => {
    const a = express();
    a.disable('x-powered-by');
    a.set('etag', false);
    a.use((req, res) => send(res, req.path === '/error' ? 404 : 201, BODIES[req.path.slice(1)]));
    return a;
  };

  beforeAll(async () => {
    ours = await listen(app((res, status, body) => sendJson(res, status, body)));
    theirs = await listen(app((res, status, body) => res.status(status).json(body)));
  });
  afterAll(() => Promise.all(servers.map((s) => new Promise((r) => s.close(r)))));

  const answer = async (base: string, method: string, path: string) => {
    const res = await fetch(base + path, { method });
    const headers = Object.fromEntries([...res.headers].filter(([name]) => name !== 'date'));
    return { status: res.status, headers, bytes: Buffer.from(await res.arrayBuffer()) };
  };

  for (const path of Object.keys(BODIES).map((k) => `/${k}`)) {
    for (const method of ['GET', 'HEAD']) {
      it(`${method} ${path}: the same status, headers and bytes as express's res.json`, async () => {
        const mine = await answer(ours, method, path);
        expect(mine).toEqual(await answer(theirs, method, path));
        expect(mine.headers['content-type']).toBe('application/json; charset=utf-8');
        if (method === 'GET') {
          expect(Number(mine.headers['content-length'])).toBe(mine.bytes.length);
          expect(JSON.parse(mine.bytes.toString('utf8'))).toEqual(BODIES[path.slice(1)]);
        } else expect(mine.bytes.length).toBe(0);
      });
    }
  }
});
