// Username rules of docs/authentication.md: validation, NFC normalisation and the case-insensitive uniqueness key.

import { RestError } from '../../errors/rest-error.js';

export const USERNAME_MAX_CHARACTERS = 32;

/** A username that passed every rule: `username` is stored, `key` enforces uniqueness. */
export interface NormalizedUsername {
  readonly username: string;
  readonly key: string;
}

type Reason =
  'type' | 'length' | 'control' | 'bidi' | 'invisible' | 'blank' | 'combining' | 'surrogate' | 'space';

const messages: Readonly<Record<Reason, string>> = {
  type: 'username must be a string',
  length: `username must be 1 to ${USERNAME_MAX_CHARACTERS} characters long`,
  control: 'username must not contain control characters or line breaks',
  bidi: 'username must not contain bidirectional control characters',
  invisible: 'username must not contain invisible characters (format, zero-width or default-ignorable)',
  blank: 'username must not contain blank-rendering characters or no-break spaces',
  combining: 'username must not start with a combining mark',
  surrogate: 'username must be valid Unicode text',
  space: 'username must not start or end with a space',
};

// Every rule is a Unicode property (https://www.unicode.org/reports/tr44/#Property_Index), so
// the list follows Node's Unicode version instead of a hand-kept table.
// C0/C1 controls, DEL, and the line/paragraph separators that act as line breaks.
const CONTROL = /[\p{Cc}\p{Zl}\p{Zp}]/u;
// Embeddings, overrides, isolates and marks (U+202E turns `admin\u202Egpj` into "adminjpg").
const BIDI = /\p{Bidi_Control}/u;
// Format characters (soft hyphen, zero-width space/joiners, word joiner, BOM, tag characters)
// and the other default-ignorable code points, which renderers draw as nothing: fillers
// (U+3164, U+115F, U+FFA0), the combining grapheme joiner U+034F, variation selectors
// (U+FE0F), U+17B4. Two names differing only by one would look identical.
const INVISIBLE = /[\p{Cf}\p{Default_Ignorable_Code_Point}]/u;
// Characters that render as blank space although they are not default-ignorable: the blank
// Braille pattern U+2800, and the no-break spaces U+00A0, U+2007 and U+202F, which look like an
// ordinary space (`adm\u00A0in` next to `adm in`).
const BLANK = /[\u2800\u00A0\u2007\u202F]/u;
// A mark at the start has no base character: it stacks on whatever is shown before the name.
const LEADING_MARK = /^\p{M}/u;
const EDGE_SPACE = /^\s|\s$/u;
// With the `u` flag a lone surrogate is one code point of category Cs.
const LONE_SURROGATE = /\p{Cs}/u;

/** Checked in this order; the first broken rule is reported, with the character it found. */
const RULES: ReadonlyArray<readonly [Reason, RegExp]> = [
  ['control', CONTROL],
  ['bidi', BIDI],
  ['invisible', INVISIBLE],
  ['blank', BLANK],
  ['combining', LEADING_MARK],
];

const codePoint = (c: string): string =>
  `U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;

const invalid = (reason: Reason, found?: string): RestError =>
  new RestError('invalid_username', messages[reason], {
    details: { field: 'username', reason, ...(found === undefined ? {} : { character: codePoint(found) }) },
  });

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
  for (const [reason, rule] of RULES) {
    const found = rule.exec(username)?.[0];
    if (found !== undefined) throw invalid(reason, found);
  }
  if (EDGE_SPACE.test(username)) throw invalid('space');
  return { username, key: usernameKey(username) };
}
