// Every JSON answer of the server: the status, `Content-Type: application/json; charset=utf-8`,
// `Content-Length` and the body, as express's `res.json` writes them for rest's answers (no ETag:
// app.ts turns it off; no JSONP, no replacer, no spaces) without its per-answer look-ups of the
// app's settings and its freshness check. The body string goes to `end` whole, so Node writes the
// head and the body with one system call; a HEAD answer keeps the length and drops the body
// (Node's ServerResponse).

import type { ServerResponse } from 'node:http';

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('Content-Type', JSON_CONTENT_TYPE);
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}
