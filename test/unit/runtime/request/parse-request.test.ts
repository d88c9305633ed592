import { describe, expect, it } from 'vitest';
import { parseInList, parseFilter } from '../../../../runtime/request/parse-filter.js';
import { parseOrder } from '../../../../runtime/request/parse-order.js';
import { parsePage } from '../../../../runtime/request/parse-page.js';
import { parseTableRequest, type TableRequestInput } from '../../../../runtime/request/parse-request.js';
import { parseRoute } from '../../../../runtime/request/parse-route.js';
import { parseSelect } from '../../../../runtime/request/parse-select.js';
import { actionOf, type JsonValue } from '../../../../runtime/request/types.js';
import { errorOf } from '../../../support/thrown.js';

describe('parseRoute', () => {
  it.each([
    ['GET', '/', { kind: 'health' }],
    ['HEAD', '/', { kind: 'health' }],
    ['GET', '/items', { kind: 'table', table: 'items', key: undefined, operation: 'read' }],
    ['GET', '/items/', { kind: 'table', table: 'items', key: undefined, operation: 'read' }],
    ['POST', '/items', { kind: 'table', table: 'items', key: undefined, operation: 'create' }],
    ['PATCH', '/items/7', { kind: 'table', table: 'items', key: '7', operation: 'update' }],
    ['PUT', '/items/7', { kind: 'table', table: 'items', key: '7', operation: 'update' }],
    ['DELETE', '/items/a%2Fb', { kind: 'table', table: 'items', key: 'a/b', operation: 'delete' }],
    ['GET', '/we%22ird%20name', { kind: 'table', table: 'we"ird name', key: undefined, operation: 'read' }],
  ])('%s %s', (method, path, expected) => {
    expect(parseRoute(method, path)).toEqual(expected);
  });

  it.each([
    ['POST', '/', 'GET, HEAD'],
    ['DELETE', '/', 'GET, HEAD'],
    ['POST', '/items/1', 'GET, HEAD, PUT, PATCH, DELETE'],
    ['OPTIONS', '/items', 'GET, HEAD, POST, PUT, PATCH, DELETE'],
    ['TRACE', '/items', 'GET, HEAD, POST, PUT, PATCH, DELETE'],
  ])('%s %s is 405 with Allow: %s', (method, path, allow) => {
    const e = errorOf(() => parseRoute(method, path));
    expect([e.status, e.code, e.headers['Allow']]).toEqual([405, 'method_not_allowed', allow]);
  });

  it.each(['/a/b/c', '/a//b', '//'])('%s is 404', (path) => {
    expect(errorOf(() => parseRoute('GET', path)).status).toBe(404);
  });

  it('rejects broken percent-encoding with 400', () => {
    expect(errorOf(() => parseRoute('GET', '/items%zz')).code).toBe('invalid_path');
  });
});

describe('parseFilter', () => {
  it.each([
    ['a', 'eq.5', { kind: 'compare', column: 'a', op: 'eq', value: '5' }],
    ['a', 'neq.', { kind: 'compare', column: 'a', op: 'neq', value: '' }],
    ['a', 'lte.1.5', { kind: 'compare', column: 'a', op: 'lte', value: '1.5' }],
    ['a', 'like.*x.y*', { kind: 'pattern', column: 'a', op: 'like', pattern: '*x.y*' }],
    ['a', 'ilike.Ab*', { kind: 'pattern', column: 'a', op: 'ilike', pattern: 'Ab*' }],
    ['a', 'in.(1,2,3)', { kind: 'in', column: 'a', values: ['1', '2', '3'] }],
    ['a', 'in.()', { kind: 'in', column: 'a', values: [] }],
    ['a', 'is.NULL', { kind: 'is', column: 'a', value: 'null' }],
    ['a', 'is.true', { kind: 'is', column: 'a', value: 'true' }],
  ])('%s=%s', (column, raw, expected) => {
    expect(parseFilter(column, raw)).toEqual(expected);
  });

  it.each([
    ['a', 'five', 'invalid_filter'],
    ['a', 'between.1', 'invalid_filter'],
    ['a', 'is.maybe', 'invalid_filter'],
    ['a', 'in.1,2', 'invalid_filter'],
    ['', 'eq.1', 'invalid_filter'],
  ])('%s=%s is 400 %s', (column, raw, code) => {
    const e = errorOf(() => parseFilter(column, raw));
    expect([e.status, e.code]).toEqual([400, code]);
  });

  it.each([
    ['(a,b)', ['a', 'b']],
    ['("a,b",c)', ['a,b', 'c']],
    ['("say \\"hi\\"",")")', ['say "hi"', ')']],
    ['(,x,)', ['', 'x', '']],
    ['("")', ['']],
  ])('in list %s', (text, values) => {
    expect(parseInList('c', text)).toEqual(values);
  });

  it.each(['("open)', '("a"b)'])('in list %s is rejected', (text) => {
    expect(errorOf(() => parseInList('c', text)).code).toBe('invalid_filter');
  });
});

describe('parseSelect / parseOrder / parsePage', () => {
  it.each([
    [undefined, undefined],
    ['*', undefined],
    ['a,b', ['a', 'b']],
    [' a , b,a', ['a', 'b']],
  ])('select=%s', (raw, expected) => {
    expect(parseSelect(raw)).toEqual(expected);
  });

  it.each(['', 'a,,b', 'a,*'])('select=%s is 400', (raw) => {
    expect(errorOf(() => parseSelect(raw)).code).toBe('invalid_select');
  });

  it.each([
    ['a', [{ column: 'a', direction: 'asc' }]],
    [
      'a.desc,b',
      [
        { column: 'a', direction: 'desc' },
        { column: 'b', direction: 'asc' },
      ],
    ],
    ['a.desc.nullsfirst', [{ column: 'a', direction: 'desc', nulls: 'first' }]],
    ['a.nullslast', [{ column: 'a', direction: 'asc', nulls: 'last' }]],
    ['x.y.asc', [{ column: 'x.y', direction: 'asc' }]],
  ])('order=%s', (raw, expected) => {
    expect(parseOrder(raw)).toEqual(expected);
  });

  it.each(['asc', '.desc', 'a,', 'nullsfirst'])('order=%s is 400', (raw) => {
    expect(errorOf(() => parseOrder(raw)).code).toBe('invalid_order');
  });

  it.each([
    [undefined, undefined, { limit: 100, offset: 0 }],
    ['3', '1000', { limit: 1000, offset: 2000 }],
    ['1', '1', { limit: 1, offset: 0 }],
  ])('page=%s page_size=%s', (page, size, expected) => {
    expect(parsePage(page, size)).toEqual(expected);
  });

  it.each([
    ['0', undefined],
    ['-1', undefined],
    ['1.5', undefined],
    ['x', undefined],
    ['', undefined],
    [undefined, '0'],
    [undefined, '1001'],
    [undefined, '1e2'],
    ['99999999999', undefined],
  ])('page=%s page_size=%s is 400', (page, size) => {
    const e = errorOf(() => parsePage(page, size));
    expect([e.status, e.code]).toEqual([400, 'invalid_page']);
  });
});

describe('parseTableRequest', () => {
  const input = (
    operation: TableRequestInput['operation'],
    query: string,
    extra: { key?: string; body?: JsonValue; maxRows?: number } = {},
  ): TableRequestInput => ({
    table: 't',
    key: extra.key,
    operation,
    query: new URLSearchParams(query),
    body: extra.body,
    maxRows: extra.maxRows ?? 1000,
  });

  it('lists with every parameter', () => {
    const parsed = parseTableRequest(
      input('read', 'select=a,b&order=a.desc&page=2&page_size=10&a=gt.1&a=lt.9&mine'),
    );
    expect(parsed).toEqual({
      kind: 'list',
      table: 't',
      select: ['a', 'b'],
      order: [{ column: 'a', direction: 'desc' }],
      window: { limit: 10, offset: 10 },
      filters: [
        { kind: 'compare', column: 'a', op: 'gt', value: '1' },
        { kind: 'compare', column: 'a', op: 'lt', value: '9' },
      ],
      mine: true,
    });
    expect(actionOf(parsed)).toBe('read_mine');
  });

  it('counts with filters', () => {
    const parsed = parseTableRequest(input('read', 'count&b=is.null'));
    expect(parsed).toEqual({
      kind: 'count',
      table: 't',
      filters: [{ kind: 'is', column: 'b', value: 'null' }],
      mine: false,
    });
    expect(actionOf(parsed)).toBe('read');
  });

  it('reads one row by key with select', () => {
    expect(parseTableRequest(input('read', 'select=a', { key: '5' }))).toEqual({
      kind: 'get',
      table: 't',
      key: '5',
      select: ['a'],
      filters: [],
      mine: false,
    });
  });

  it('creates one row from an object and many from an array', () => {
    expect(parseTableRequest(input('create', '', { body: { a: 1 } }))).toMatchObject({
      kind: 'create',
      rows: [{ a: 1 }],
      many: false,
    });
    expect(parseTableRequest(input('create', '', { body: [{ a: 1 }, {}] }))).toMatchObject({
      rows: [{ a: 1 }, {}],
      many: true,
    });
    expect(parseTableRequest(input('create', '', { body: [] }))).toMatchObject({ rows: [], many: true });
  });

  it('creates at most maxRows rows from one array: more is 413 too_many_rows', () => {
    const rows = (n: number): JsonValue => Array.from({ length: n }, () => ({ a: 1 }));
    expect(parseTableRequest(input('create', '', { body: rows(3), maxRows: 3 }))).toMatchObject({
      many: true,
    });
    expect(parseTableRequest(input('create', '', { body: rows(1000) }))).toMatchObject({ many: true });
    for (const [n, maxRows] of [
      [4, 3],
      [1001, 1000],
    ] as const) {
      const e = errorOf(() => parseTableRequest(input('create', '', { body: rows(n), maxRows })));
      expect([e.status, e.code, e.details]).toEqual([413, 'too_many_rows', { rows: n, max_rows: maxRows }]);
      expect(e.message).toBe(
        `a POST may create at most ${maxRows} rows at once; this one has ${n} (-http.max_rows)`,
      );
    }
  });

  it('a single object is one row whatever maxRows is', () => {
    expect(parseTableRequest(input('create', '', { body: { a: 1 }, maxRows: 1 }))).toMatchObject({
      many: false,
    });
  });

  it('updates and deletes by key or by filters', () => {
    expect(parseTableRequest(input('update', '', { key: '1', body: { a: 2 } }))).toMatchObject({
      kind: 'update',
      key: '1',
      patch: { a: 2 },
    });
    expect(parseTableRequest(input('update', 'a=eq.1', { body: { a: 2 } }))).toMatchObject({
      kind: 'update',
      key: undefined,
    });
    expect(actionOf(parseTableRequest(input('delete', 'a=eq.1')))).toBe('delete');
  });

  it.each([
    ['update without key or filter', input('update', '', { body: { a: 1 } }), 'missing_filter'],
    ['delete without key or filter', input('delete', ''), 'missing_filter'],
    ['update with an empty object', input('update', 'a=eq.1', { body: {} }), 'invalid_body'],
    ['update with an array', input('update', 'a=eq.1', { body: [{ a: 1 }] }), 'invalid_body'],
    ['create with a scalar', input('create', '', { body: 5 }), 'invalid_body'],
    ['create with an array of scalars', input('create', '', { body: [{ a: 1 }, 2] }), 'invalid_body'],
    ['create with filters', input('create', 'a=eq.1', { body: {} }), 'invalid_parameter'],
    ['count with order', input('read', 'count&order=a'), 'invalid_parameter'],
    ['one row with page', input('read', 'page=2', { key: '1' }), 'invalid_parameter'],
    ['delete with order', input('delete', 'a=eq.1&order=a'), 'invalid_parameter'],
    ['count with a value', input('read', 'count=yes'), 'invalid_parameter'],
    ['select twice', input('read', 'select=a&select=b'), 'invalid_parameter'],
  ])('%s is 400 %s', (_name, request, code) => {
    const e = errorOf(() => parseTableRequest(request));
    expect([e.status, e.code]).toEqual([400, code]);
  });
});
