// The client address a request is counted under by the login limits (docs/authentication.md): the socket's
// remote address; with `-http.trust_proxy`, the address the proxy in front of rest saw instead.

import { isIP } from 'node:net';
import type { Request } from 'express';

/**
 * Without `trustProxy`, X-Forwarded-For is ignored: any client can write it. With it, the last
 * X-Forwarded-For entry — the one the proxy directly in front of rest appended — when it is an IP
 * address; otherwise (no header, garbage) the socket's address. Entries further left were written
 * by the client or by proxies rest cannot vouch for, so they are never used.
 */
export function clientAddress(req: Request, trustProxy: boolean): string {
  const socketAddress = req.socket.remoteAddress ?? 'unknown';
  if (!trustProxy) return socketAddress;
  // Node joins repeated X-Forwarded-For headers with ", " (its type still allows a list).
  const forwarded = [req.headers['x-forwarded-for'] ?? []].flat().join(',');
  const last = forwarded.split(',').pop()?.trim() ?? '';
  return isIP(last) === 0 ? socketAddress : last;
}
