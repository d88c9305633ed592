// A request a client sends and then abandons: a raw HTTP/1.1 POST on a socket of its own whose
// answer is never read. The hostile-load lane and the client-gone tests destroy the socket while
// the server still works on the request.

import { connect, type Socket } from 'node:net';

/** Writes the POST of `body` to `path` with a bearer token; resolves with the open socket. */
export function sendAndHold(baseUrl: string, path: string, token: string, body: string): Promise<Socket> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${token}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      resolve(socket);
    });
    socket.on('error', reject);
  });
}
