// CORS from the config and the headers of every response, on every database.

import { expect, it } from 'vitest';
import type { Reply } from '../../support/http.js';
import { expectError, forEachDatabase } from './matrix.js';

const ALLOWED = 'https://app.example';
const cors = { enabled: true, origins: [ALLOWED, 'null'] };
/** What a browser may send: the seed's headers and those of the PostgREST clients. */
const ALLOWED_HEADERS =
  'Authorization, Content-Type, X-Request-Id, Prefer, apikey, x-client-info, Accept-Profile, Content-Profile, Range, X-Retry-Count';
const EXPOSED_HEADERS = 'Content-Range, Location, X-Request-Id';

function expectCommonHeaders(r: Reply): void {
  expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
  expect(r.headers.get('x-content-type-options')).toBe('nosniff');
  expect(r.headers.get('x-request-id')).toBeTruthy();
}

forEachDatabase(
  'CORS enabled',
  (ctx) => {
    it('echoes a listed origin with Vary: Origin, on success and on error', async () => {
      for (const path of ['/items', '/nope', '/', '/openapi.json']) {
        const r = await ctx().http.get(path, { headers: { origin: ALLOWED } });
        expect(r.headers.get('access-control-allow-origin')).toBe(ALLOWED);
        expect(r.headers.get('vary')).toMatch(/\bOrigin\b/);
        expect(r.headers.get('access-control-expose-headers')).toBe(EXPOSED_HEADERS);
        expectCommonHeaders(r);
      }
    });

    it('never echoes an unlisted origin, nor null even when listed', async () => {
      for (const origin of ['https://evil.example', 'https://app.example.evil', 'null']) {
        const r = await ctx().http.get('/items', { headers: { origin } });
        expect(r.status).toBe(200);
        expect(r.headers.get('access-control-allow-origin')).toBeNull();
        expect(r.headers.get('vary')).toMatch(/\bOrigin\b/);
      }
    });

    it('answers a preflight without touching the database (even for an unknown table)', async () => {
      const headers = {
        origin: ALLOWED,
        'access-control-request-method': 'DELETE',
        'access-control-request-headers': 'authorization, content-type',
      };
      for (const path of ['/items/1', '/no_such_table']) {
        const r = await ctx().http.call('OPTIONS', path, { headers });
        expect(r.status).toBe(204);
        expect(r.text).toBe('');
        expect(r.headers.get('access-control-allow-origin')).toBe(ALLOWED);
        expect(r.headers.get('access-control-allow-methods')).toBe('GET, HEAD, POST, PUT, PATCH, DELETE');
        expect(r.headers.get('access-control-allow-headers')).toBe(ALLOWED_HEADERS);
        expect(r.headers.get('access-control-max-age')).toBe('600');
        expect(r.headers.get('vary')).toMatch(/\bOrigin\b/);
        expectCommonHeaders(r);
      }
    });

    it('lets a PostgREST client preflight every header it sends, on both dialects', async () => {
      const asked = ALLOWED_HEADERS.split(', ');
      for (const path of ['/items?id=eq.1', '/rest/v1/items?id=eq.1']) {
        for (const method of ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE']) {
          const r = await ctx().http.call('OPTIONS', path, {
            headers: {
              origin: ALLOWED,
              'access-control-request-method': method,
              'access-control-request-headers':
                'apikey,authorization,content-profile,content-type,prefer,x-client-info',
            },
          });
          expect(r.status).toBe(204);
          const methods = (r.headers.get('access-control-allow-methods') ?? '').split(', ');
          expect(methods).toContain(method);
          const allowed = (r.headers.get('access-control-allow-headers') ?? '').toLowerCase().split(', ');
          for (const header of asked) expect(allowed).toContain(header.toLowerCase());
        }
      }
    });

    it('exposes Content-Range, Location and X-Request-Id on an actual request of either dialect', async () => {
      for (const path of ['/items', '/rest/v1/items']) {
        const r = await ctx().http.get(path, { headers: { origin: ALLOWED, prefer: 'count=exact' } });
        const exposed = (r.headers.get('access-control-expose-headers') ?? '').split(', ');
        expect(exposed).toEqual(['Content-Range', 'Location', 'X-Request-Id']);
        expect(r.headers.get('access-control-allow-origin')).toBe(ALLOWED);
      }
    });

    it('answers a preflight from an unlisted origin without any allow header', async () => {
      const r = await ctx().http.call('OPTIONS', '/items', {
        headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET' },
      });
      expect(r.status).toBe(204);
      expect(r.headers.get('access-control-allow-origin')).toBeNull();
      expect(r.headers.get('access-control-allow-methods')).toBeNull();
    });

    it('treats OPTIONS that is not a preflight as a method not allowed', async () => {
      expectError(
        await ctx().http.call('OPTIONS', '/items', { headers: { origin: ALLOWED } }),
        405,
        'method_not_allowed',
      );
    });
  },
  cors,
);

forEachDatabase('CORS disabled', (ctx) => {
  it('sends no CORS headers and refuses preflights with 405', async () => {
    const r = await ctx().http.get('/items', { headers: { origin: ALLOWED } });
    expect(r.status).toBe(200);
    expect(r.headers.get('access-control-allow-origin')).toBeNull();
    const preflight = await ctx().http.call('OPTIONS', '/items', {
      headers: { origin: ALLOWED, 'access-control-request-method': 'GET' },
    });
    expectError(preflight, 405, 'method_not_allowed');
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('puts the common headers on every kind of response', async () => {
    const replies = [
      await ctx().http.get('/'),
      await ctx().http.get('/items'),
      await ctx().http.get('/nope'),
      await ctx().http.call('PROPFIND', '/items'),
      await ctx().http.call('POST', '/items', { body: 'x' }),
      await ctx().http.call('HEAD', '/items'),
    ];
    replies.forEach(expectCommonHeaders);
    expect(replies.map((r) => r.status)).toEqual([200, 200, 404, 405, 415, 200]);
  });
});
