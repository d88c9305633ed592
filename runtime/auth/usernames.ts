// Username rules of SPEC §3.1: validation, NFC normalisation and the case-insensitive uniqueness key.

import { RestError } from '../../errors/rest-error.js';

export const USERNAME_MAX_CHARACTERS = 32;

/** A username that passed every rule: `username` is stored, `key` enforces uniqueness. */
export interface NormalizedUsername {
  readonly username: string;
  readonly key: string;
}

type Reason = 'type' | 'length' | 'control' | 'zero_width' | 'bidi' | 'invisible' | 'surrogate' | 'space';

const messages: Readonly<Record<Reason, string>> = {
  type: 'username must be a string',
  length: `username must be 1 to ${USERNAME_MAX_CHARACTERS} characters long`,
  control: 'username must not contain control characters',
  zero_width: 'username must not contain zero-width characters',
  bidi: 'username must not contain bidirectional control characters',
  invisible: 'username must not contain invisible formatting characters',
  surrogate: 'username must be valid Unicode text',
  space: 'username must not start or end with a space',
};

const ZERO_WIDTH = /[\u200B-\u200D\u2060\uFEFF]/u;
const BIDI = /[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/u;
// C0/C1 controls, DEL, and the line/paragraph separators that act as line breaks.
const CONTROL = /[\p{Cc}\u2028\u2029]/u;
// Every other format character (soft hyphen, invisible operators, tag characters…) also
// renders as nothing, so two names differing only by one would look identical.
const INVISIBLE = /\p{Cf}/u;
const EDGE_SPACE = /^\s|\s$/u;
// With the `u` flag a lone surrogate is one code point of category Cs.
const LONE_SURROGATE = /\p{Cs}/u;

const invalid = (reason: Reason): RestError =>
  new RestError('invalid_input', 'invalid_username', messages[reason], { details: { field: 'username', reason } });

/**
 * The uniqueness key: the NFC name under full case folding. JavaScript has no case-fold
 * primitive; upper- then lower-casing approximates Unicode's full folding (ß → ss, ς → σ,
 * K (Kelvin) → k) and is stable under a second application. NFC again afterwards because
 * case mappings can produce decomposed sequences (İ → i + U+0307).
 */
export function usernameKey(username: string): string {
  return username.normalize('NFC').toUpperCase().toLowerCase().normalize('NFC');
}

/** Validates and normalises a username; throws 400 `invalid_username` naming the broken rule. */
export function normalizeUsername(input: unknown): NormalizedUsername {
  if (typeof input !== 'string') throw invalid('type');
  if (LONE_SURROGATE.test(input)) throw invalid('surrogate');
  const username = input.normalize('NFC');
  const length = [...username].length;
  if (length < 1 || length > USERNAME_MAX_CHARACTERS) throw invalid('length');
  if (CONTROL.test(username)) throw invalid('control');
  if (ZERO_WIDTH.test(username)) throw invalid('zero_width');
  if (BIDI.test(username)) throw invalid('bidi');
  if (INVISIBLE.test(username)) throw invalid('invisible');
  if (EDGE_SPACE.test(username)) throw invalid('space');
  return { username, key: usernameKey(username) };
}
