// Reads a write's body: `Content-Type: application/json` (415), at most 1 MiB (413),
// valid UTF-8 JSON (400), nested at most 32 levels (400).

import type { IncomingMessage } from 'node:http';
import { RestError } from '../../errors/rest-error.js';
import { clientGone } from '../db/map-db-error.js';
import type { JsonValue } from '../request/types.js';

export const BODY_LIMIT_BYTES = 1024 * 1024;
export const MAX_JSON_DEPTH = 32;
/** Past this we stop draining an oversized body and drop the connection. */
const DRAIN_LIMIT_BYTES = 16 * BODY_LIMIT_BYTES;

export interface BodyLimits {
  readonly maxBytes: number;
  readonly maxDepth: number;
}

const DEFAULT_LIMITS: BodyLimits = { maxBytes: BODY_LIMIT_BYTES, maxDepth: MAX_JSON_DEPTH };

export function isJsonContentType(header: string | undefined): boolean {
  if (header === undefined) return false;
  const [type, ...params] = header.split(';').map((s) => s.trim().toLowerCase());
  if (type !== 'application/json') return false;
  return params.every((p) => !p.startsWith('charset=') || p === 'charset=utf-8' || p === 'charset="utf-8"');
}

/** Deepest nesting of arrays/objects in JSON text, scanning outside strings; stops past `limit`. */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      depth++;
      if (depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

function tooLarge(maxBytes: number): RestError {
  return new RestError('payload_too_large', `the body is larger than ${maxBytes} bytes`);
}

/**
 * The body's bytes, read by the stream's events (an async iterator over the request cost every
 * write some 2 KB of garbage and several promise turns more: docs/performance.md). Past
 * `maxBytes` the rest is drained unkept, so the 413 reaches the client; past DRAIN_LIMIT_BYTES the
 * connection is dropped. A request that closes before its body ended, or before it was read, rejects with that.
 */
function readBytes(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  if (req.readableEnded) return Promise.resolve(Buffer.alloc(0));
  // Closed while the request was authenticated: a destroyed stream emits nothing more, so waiting
  // for its events would never end.
  if (req.destroyed)
    return Promise.reject(clientGone(new Error('the request closed before its body was read')));
  const declared = Number(req.headers['content-length']);
  return new Promise((resolve, reject) => {
    let total = 0;
    let oversized = Number.isFinite(declared) && declared > maxBytes;
    const chunks: Buffer[] = [];
    const settle = (error: unknown): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
      if (error !== undefined) reject(error);
      else if (oversized) reject(tooLarge(maxBytes));
      else resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total));
    };
    const onData = (chunk: Buffer): void => {
      total += chunk.length;
      if (total > maxBytes) oversized = true;
      if (total > DRAIN_LIMIT_BYTES) {
        settle(tooLarge(maxBytes));
        req.destroy();
      } else if (!oversized) chunks.push(chunk);
    };
    const onEnd = (): void => settle(undefined);
    // Its client went away: nobody will read an answer (503 client_gone, logged at debug level).
    const onClose = (): void => settle(clientGone(new Error('the request closed before its body ended')));
    const onError = (e: unknown): void => settle(clientGone(e));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

export async function readJsonBody(
  req: IncomingMessage,
  limits: BodyLimits = DEFAULT_LIMITS,
): Promise<JsonValue> {
  if (!isJsonContentType(req.headers['content-type'])) {
    throw new RestError('unsupported_media_type', 'writes need Content-Type: application/json');
  }
  const bytes = await readBytes(req, limits.maxBytes);
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new RestError('invalid_json', 'the body is not valid UTF-8');
  }
  if (text.trim() === '')
    throw new RestError('invalid_json', 'the body is empty; send a JSON object or array');
  if (jsonDepthExceeds(text, limits.maxDepth)) {
    throw new RestError('json_too_deep', `the body is nested deeper than ${limits.maxDepth} levels`);
  }
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    throw new RestError('invalid_json', 'the body is not valid JSON');
  }
}
