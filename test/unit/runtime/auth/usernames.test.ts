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
    ['a\u0000b', 'control'],
    ['a\tb', 'control'],
    ['a\nb', 'control'],
    ['a\u007Fb', 'control'],
    ['a\u0085b', 'control'],
    ['a\u2028b', 'control'],
    ['a\u200Bb', 'zero_width'],
    ['a\u200Cb', 'zero_width'],
    ['a\u200Db', 'zero_width'],
    ['a\u2060b', 'zero_width'],
    ['\uFEFFab', 'zero_width'],
    ['a\u202Ab', 'bidi'],
    ['admin\u202Egpj', 'bidi'],
    ['a\u2066b', 'bidi'],
    ['a\u2069b', 'bidi'],
    ['a\u200Eb', 'bidi'],
    ['a\u200Fb', 'bidi'],
    ['a\u061Cb', 'bidi'],
    ['ad\u00ADmin', 'invisible'],
    ['a\u{E0041}b', 'invisible'],
    [' alice', 'space'],
    ['alice ', 'space'],
    ['alice\u00A0', 'space'],
    ['\u3000alice', 'space'],
    ['a\uD800b', 'surrogate'],
    [42, 'type'],
    [null, 'type'],
    [undefined, 'type'],
  ])('rejects %j (%s)', (input, reason) => {
    const e = rejection(input);
    expect(e.category).toBe('invalid_input');
    expect(e.code).toBe('invalid_username');
    expect(e.details).toEqual({ field: 'username', reason });
  });

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
