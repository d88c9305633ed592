// Requests and responses born with express's prototypes. For every request express sets the
// prototype of Node's request and response objects to its own (app.request, app.response:
// `Object.setPrototypeOf` in app.handle). Changing an object's prototype after it was made throws
// V8's optimisations for it away, and Node's HTTP code then runs slowly on both objects for the
// rest of the request: measured on this machine, a one-route express app spent 150–200 µs of CPU
// per request, against 55–85 µs when Node makes the objects with express's prototypes from the
// start (BENCHMARKS.md). express's own `setPrototypeOf` then finds the prototype it sets and
// changes nothing. Node builds them with the classes of the server's options
// (https://nodejs.org/api/http.html#httpcreateserveroptions-requestlistener).

import { IncomingMessage, ServerResponse, type ServerOptions } from 'node:http';
import type { Express } from 'express';

type RequestClass = NonNullable<ServerOptions['IncomingMessage']>;
type ResponseClass = NonNullable<ServerOptions['ServerResponse']>;

/**
 * A constructor that builds what `base` builds, on `prototype`. Node's IncomingMessage and
 * ServerResponse are plain constructor functions; app.request and app.response inherit from their
 * prototypes, so `instanceof` still holds.
 */
function madeOn(base: object, prototype: object): unknown {
  function Shaped(this: object, ...args: unknown[]): void {
    Reflect.apply(base as (...a: unknown[]) => void, this, args);
  }
  Shaped.prototype = prototype;
  return Shaped;
}

/** `createServer` options whose requests and responses are made with `app`'s prototypes. */
export function expressShaped(app: Express): ServerOptions {
  return {
    IncomingMessage: madeOn(IncomingMessage, app.request) as RequestClass,
    ServerResponse: madeOn(ServerResponse, app.response) as ResponseClass,
  };
}
