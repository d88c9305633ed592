// The query string → its parameters, read as URLSearchParams reads them (`+` is a space, a
// malformed `%` stays literal), except that percent-escapes that decode to bytes that are not
// UTF-8 are a 400: URLSearchParams would turn them into U+FFFD, so `eq.%ED%A0%80` (a lone
// surrogate in CESU-8) would silently become another value instead of the refusal of docs/http-api.md.

import { RestError } from '../../errors/rest-error.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });
const PERCENT_ESCAPE = /%([0-9A-Fa-f]{2})/g;

/** The bytes `raw` stands for: UTF-8 of its characters, with each `%XX` replaced by one byte. */
function percentDecodedBytes(raw: string): Buffer {
  const parts: Buffer[] = [];
  let last = 0;
  for (const m of raw.matchAll(PERCENT_ESCAPE)) {
    parts.push(Buffer.from(raw.slice(last, m.index), 'utf8'), Buffer.of(Number.parseInt(m[1] ?? '', 16)));
    last = m.index + m[0].length;
  }
  parts.push(Buffer.from(raw.slice(last), 'utf8'));
  return Buffer.concat(parts);
}

/** `raw` is the part of the URL after `?`. */
export function parseQuery(raw: string): URLSearchParams {
  // `&`, `=` and `+` are ASCII, so the whole string is UTF-8 exactly when every name and value is.
  if (raw.includes('%')) {
    try {
      utf8.decode(percentDecodedBytes(raw));
    } catch {
      throw new RestError('invalid_query', 'the query string is not valid UTF-8 after percent-decoding');
    }
  }
  return new URLSearchParams(raw);
}
