import { describe, expect, it } from 'vitest';
import { RestError } from '../../../../errors/rest-error.js';
import { normalizeUsername, usernameKey } from '../../../../runtime/auth/usernames.js';

const NFD_ELISE = 'E\u0301lise';
const NFC_ELISE = '\u00C9lise';

function rejection(input: unknown): RestError {
  try {
    normalizeUsername(input);
  } catch (e) {
    if (e instanceof RestError) return e;
    throw e;
  }
  throw new Error(`accepted ${JSON.stringify(input)}`);
}

describe('normalizeUsername', () => {
  it.each([
    ['a', 'a'],
    ['Alice', 'Alice'],
    ['alice smith', 'alice smith'],
    ['x'.repeat(32), 'x'.repeat(32)],
    ['é'.repeat(32), 'é'.repeat(32)],
    ['😀'.repeat(32), '😀'.repeat(32)],
    [NFD_ELISE, NFC_ELISE],
    ['e\u0301'.repeat(32), 'é'.repeat(32)],
    ['名前', '名前'],
    ['o\u2019brien', 'o\u2019brien'],
  ])('accepts %j as %j', (input, stored) => {
    expect(normalizeUsername(input).username).toBe(stored);
  });

  it.each([
    ['', 'length'],
    ['x'.repeat(33), 'length'],
    ['😀'.repeat(33), 'length'],
    ['e\u0301'.repeat(33), 'length'],
    ['a\uD800b', 'surrogate'],
    [' alice', 'space'],
    ['alice ', 'space'],
    ['alice\u3000', 'space'],
    ['\u3000alice', 'space'],
    [42, 'type'],
    [null, 'type'],
    [undefined, 'type'],
  ])('rejects %j (%s)', (input, reason) => {
    const e = rejection(input);
    expect(e.category).toBe('invalid_input');
    expect(e.code).toBe('invalid_username');
    expect(e.details).toEqual({ field: 'username', reason });
  });

  it.each([
    // controls and line breaks
    ['a\u0000b', 'control', 'U+0000'],
    ['a\tb', 'control', 'U+0009'],
    ['a\nb', 'control', 'U+000A'],
    ['a\u007Fb', 'control', 'U+007F'],
    ['a\u0085b', 'control', 'U+0085'],
    ['a\u2028b', 'control', 'U+2028'],
    ['a\u2029b', 'control', 'U+2029'],
    // bidirectional controls
    ['a\u202Ab', 'bidi', 'U+202A'],
    ['admin\u202Egpj', 'bidi', 'U+202E'],
    ['a\u2066b', 'bidi', 'U+2066'],
    ['a\u2069b', 'bidi', 'U+2069'],
    ['a\u200Eb', 'bidi', 'U+200E'],
    ['a\u200Fb', 'bidi', 'U+200F'],
    ['a\u061Cb', 'bidi', 'U+061C'],
    // zero-width and other format characters (Cf)
    ['a\u200Bb', 'invisible', 'U+200B'],
    ['a\u200Cb', 'invisible', 'U+200C'],
    ['a\u200Db', 'invisible', 'U+200D'],
    ['a\u2060b', 'invisible', 'U+2060'],
    ['\uFEFFab', 'invisible', 'U+FEFF'],
    ['ad\u00ADmin', 'invisible', 'U+00AD'],
    ['a\u180Eb', 'invisible', 'U+180E'],
    ['a\u{E0041}b', 'invisible', 'U+E0041'],
    // default-ignorable code points that are not Cf (docs/authentication.md's examples first)
    ['adm\u034Fin', 'invisible', 'U+034F'],
    ['admin\u3164', 'invisible', 'U+3164'],
    ['\u3164', 'invisible', 'U+3164'],
    ['admin\uFE0F', 'invisible', 'U+FE0F'],
    ['ad\u17B4min', 'invisible', 'U+17B4'],
    ['ad\u17B5min', 'invisible', 'U+17B5'],
    ['a\u115Fb', 'invisible', 'U+115F'],
    ['a\u1160b', 'invisible', 'U+1160'],
    ['a\uFFA0b', 'invisible', 'U+FFA0'],
    ['a\u{E0100}b', 'invisible', 'U+E0100'],
    ['\u2764\uFE0F', 'invisible', 'U+FE0F'],
    // blank-rendering characters and no-break spaces, anywhere
    ['\u2800', 'blank', 'U+2800'],
    ['ad\u2800min', 'blank', 'U+2800'],
    ['adm\u00A0in', 'blank', 'U+00A0'],
    ['\u00A0admin', 'blank', 'U+00A0'],
    ['alice\u00A0', 'blank', 'U+00A0'],
    ['a\u2007b', 'blank', 'U+2007'],
    ['a\u202Fb', 'blank', 'U+202F'],
    // a combining mark with no base character, whatever its kind (Mn, Mc, Me)
    ['\u0301alice', 'combining', 'U+0301'],
    ['\u0903alice', 'combining', 'U+0903'],
    ['\u20DDalice', 'combining', 'U+20DD'],
  ])('rejects %j (%s, %s)', (input, reason, character) => {
    const e = rejection(input);
    expect(e.code).toBe('invalid_username');
    expect(e.details).toEqual({ field: 'username', reason, character });
  });

  it.each(['q\u0307', 'a\u20DD', 'नमस्ते', 'ค่ะ', 'Zoë'])(
    'accepts combining marks after a base character: %j',
    (name) => {
      expect(normalizeUsername(name).username).toBe(name.normalize('NFC'));
    },
  );

  it('counts length after NFC: 32 decomposed é are 64 code points but 32 characters', () => {
    expect([...'e\u0301'.repeat(32)].length).toBe(64);
    expect(normalizeUsername('e\u0301'.repeat(32)).username).toHaveLength(32);
  });
});

describe('usernameKey', () => {
  it.each([
    ['Alice', 'alice'],
    ['ALICE', 'alice'],
    [NFC_ELISE, NFD_ELISE.toLowerCase()],
    ['\u00C9LISE', NFC_ELISE.toLowerCase()],
    ['Straße', 'STRASSE'],
    ['ΣΊΣΥΦΟΣ', 'σίσυφος'],
    ['\u212Aelvin', 'kelvin'],
    ['\u017Fam', 'sam'],
  ])('%j and %j share a key', (a, b) => {
    expect(usernameKey(a)).toBe(usernameKey(b));
  });

  it.each([
    ['Elise', NFC_ELISE],
    ['alice', 'alicia'],
    ['bob', 'bob2'],
  ])('%j and %j have different keys', (a, b) => {
    expect(usernameKey(a)).not.toBe(usernameKey(b));
  });

  it('is what normalizeUsername returns, and stable when applied again', () => {
    for (const name of ['Alice', NFD_ELISE, 'Straße', 'İstanbul', 'ΣΊΣΥΦΟΣ']) {
      const { key } = normalizeUsername(name);
      expect(key).toBe(usernameKey(name));
      expect(usernameKey(key)).toBe(key);
    }
  });
});
