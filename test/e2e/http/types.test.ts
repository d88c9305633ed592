// Type fidelity through HTTP: integers, decimals, booleans, JSON, dates, timestamps, text and
// NULL written with POST and read back with GET on every database.

import { expect, it } from 'vitest';
import type { DialectName } from '../../../compiler/types.js';
import { expectError, forEachDatabase } from './matrix.js';

const written = {
  big: '9007199254740993',
  small: 32767,
  ratio: 0.1,
  amount: '12345.678901',
  flag: true,
  doc: { a: [1, 'x', null, true], b: { c: 1.5 } },
  docb: ['x', 2],
  day: '2024-02-29',
  at: '2024-01-02T03:04:05.678Z',
  local_at: '2024-01-02T03:04:05.678',
  label: 'ünï ✓ 😀 \'"\\ %_*',
};

/** Where the databases must differ: a zone-less DATETIME on MySQL keeps no `Z`. */
const storedAt: Readonly<Record<DialectName, string>> = {
  postgres: '2024-01-02T03:04:05.678Z',
  mysql: '2024-01-02T03:04:05.678',
  sqlite: '2024-01-02T03:04:05.678Z',
};

forEachDatabase('type fidelity', (ctx) => {
  it('returns every type as it was written', async () => {
    const created = await ctx().http.post('/kinds', written);
    expect(created.status).toBe(201);
    const expected = { ...written, amount: 12345.678901, at: storedAt[ctx().kind] };
    const { id, ...stored } = created.json as { id: number };
    expect(stored).toEqual(expected);
    const read = await ctx().http.get(`/kinds/${id}`);
    expect(read.json).toEqual({ id, ...expected });
  });

  it('returns NULL as null for every type', async () => {
    const created = await ctx().http.post('/kinds', {});
    const { id } = created.json as { id: number };
    expect((await ctx().http.get(`/kinds/${id}`)).json).toEqual({
      id,
      big: null,
      small: null,
      ratio: null,
      amount: null,
      flag: null,
      doc: null,
      docb: null,
      day: null,
      at: null,
      local_at: null,
      label: null,
    });
  });

  it('keeps safe integers as numbers and JSON scalars as JSON', async () => {
    const created = await ctx().http.post('/kinds', {
      big: 42,
      flag: false,
      doc: 'just a string',
      docb: 7,
      amount: 0.5,
    });
    expect(created.json).toMatchObject({ big: 42, flag: false, doc: 'just a string', docb: 7, amount: 0.5 });
  });

  it('keeps a JSON string whose text is itself JSON a string, written and read back', async () => {
    const created = await ctx().http.post('/kinds', { doc: '123', docb: '{"a": true}' });
    expect(created.json).toMatchObject({ doc: '123', docb: '{"a": true}' });
    const { id } = created.json as { id: number };
    expect((await ctx().http.get(`/kinds/${id}`)).json).toMatchObject({ doc: '123', docb: '{"a": true}' });
  });

  it('filters by every type with the written value', async () => {
    const { id } = (await ctx().http.post('/kinds', { ...written, label: 'filter-me' })).json as {
      id: number;
    };
    const queries = [
      'big=eq.9007199254740993',
      'small=eq.32767',
      'ratio=eq.0.1',
      'amount=eq.12345.678901',
      'flag=is.true',
      'day=eq.2024-02-29',
      `at=eq.${encodeURIComponent(written.at)}`,
      `local_at=eq.${written.local_at}`,
      'doc=is.null',
    ];
    for (const q of queries.slice(0, -1)) {
      const r = await ctx().http.get(`/kinds?label=eq.filter-me&${q}&select=id`);
      expect([q, r.json]).toEqual([q, [{ id }]]);
    }
    expect((await ctx().http.get(`/kinds?label=eq.filter-me&doc=is.null`)).json).toEqual([]);
  });

  it.each([
    ['an integer out of the column range', { small: 99999999 }],
    ['a decimal with too many digits', { amount: '1e30' }],
  ])('answers 400 invalid_value for %s', async (_name, body) => {
    const before = await ctx().sql.count('kinds');
    expectError(await ctx().http.post('/kinds', body), 400, 'invalid_value');
    expect(await ctx().sql.count('kinds')).toBe(before);
  });
});
