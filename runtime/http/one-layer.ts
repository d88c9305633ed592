// The request handlers of the app, run in order as one express layer. express's router spends,
// for every layer a request passes, a path match, a prefix trim and a parameter pass: about 15 µs
// of CPU per request over the five layers rest had, and allocation per write fell from 59.5 to
// about 51 KB when four of them went (profiled under load: docs/performance.md). rest's
// handlers (common headers, access log, CORS, the auth endpoints, the table endpoints) all take
// every path, so they need none of it. Each handler is called as express would call it: `next()` goes
// on to the following one, `next(error)` and a thrown error or rejected promise go to the error
// middleware.

import type { NextFunction, Request, RequestHandler, Response } from 'express';

export function oneLayer(handlers: readonly RequestHandler[]): RequestHandler {
  return (req: Request, res: Response, done: NextFunction): void => {
    const step = (index: number, error?: unknown): void => {
      if (error !== undefined) {
        done(error);
        return;
      }
      const handler = handlers[index];
      if (handler === undefined) {
        done();
        return;
      }
      try {
        const result: unknown = handler(req, res, (e?: unknown) => step(index + 1, e));
        if (result instanceof Promise) result.catch(done);
      } catch (e) {
        done(e);
      }
    };
    step(0);
  };
}
