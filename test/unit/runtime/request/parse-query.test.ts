import { describe, expect, it } from 'vitest';
import { parseQuery } from '../../../../runtime/request/parse-query.js';
import { errorOf } from '../../../support/thrown.js';

const pairs = (params: URLSearchParams): string[][] => [...params].map(([k, v]) => [k, v]);

describe('parseQuery', () => {
  it.each([
    'title=eq.apple',
    'a=1&b=2&a=3',
    'title=eq.a+b&x',
    'title=eq.%C3%A9clair',
    'title=eq.%F0%9F%98%80',
    'title=eq.%EF%BF%BD',
    'title=eq.100%',
    'title=eq.%zz%4',
    'title=eq.%00',
    'k%3D=v%26w',
    'order=id.desc&page=2',
    '',
  ])('reads %j exactly as URLSearchParams does', (raw) => {
    expect(pairs(parseQuery(raw))).toEqual(pairs(new URLSearchParams(raw)));
  });

  it.each([
    ['a lone high surrogate in CESU-8', 'title=eq.%ED%A0%80'],
    ['a lone low surrogate in CESU-8', 'title=eq.%ED%B0%80'],
    ['a Latin-1 byte', 'title=eq.caf%E9'],
    ['a truncated sequence', 'title=eq.%C3'],
    ['a sequence cut by &', 'a=%C3&b=%A9'],
    ['an overlong encoding', 'title=eq.%C0%AF'],
    ['a byte past U+10FFFF', 'title=eq.%F4%90%80%80'],
    ['a bad name', '%FF=eq.1'],
  ])('refuses %s (%j) with 400 invalid_query', (_what, raw) => {
    const e = errorOf(() => parseQuery(raw));
    expect([e.category, e.code]).toEqual(['invalid_input', 'invalid_query']);
  });
});
