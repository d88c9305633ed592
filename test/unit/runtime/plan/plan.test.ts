import { describe, expect, it } from 'vitest';
import { dialects } from '../../../../compiler/sql/dialects.js';
import { SqlBuilder, renderSql, type RenderedSql } from '../../../../compiler/sql/fragment.js';
import { ANONYMOUS, type ColumnType, type DialectName } from '../../../../compiler/types.js';
import type { ColumnInfo, TableInfo } from '../../../../runtime/db/adapter.js';
import {
  checkDeclaredLength,
  coerceBodyValue,
  coerceQueryValue,
} from '../../../../runtime/plan/coerce-value.js';
import { planRead } from '../../../../runtime/plan/plan-read.js';
import {
  checkColumnName,
  deleteStatement,
  fitsOneInsert,
  insertStatement,
  storedRowsStatement,
  toWriteRow,
  updateStatement,
} from '../../../../runtime/plan/plan-write.js';
import { whereClause } from '../../../../runtime/plan/where.js';
import { parseTableRequest } from '../../../../runtime/request/parse-request.js';
import type { JsonValue } from '../../../../runtime/request/types.js';
import { sqliteTimestamp } from '../../../../compiler/sql/sqlite-dialect.js';
import { fakeColumn } from '../../../support/fake-schema.js';
import { errorOf } from '../../../support/thrown.js';

const column = (
  name: string,
  type: ColumnType,
  dbType: string,
  extra: Partial<Omit<ColumnInfo, 'name' | 'type' | 'dbType' | 'valueKind'>> = {},
): ColumnInfo => fakeColumn(name, type, dbType, extra);

const columns = [
  column('id', 'integer', 'integer', { nullable: false, autoIncrement: true, hasDefault: true }),
  column('title', 'text', 'text'),
  column('price', 'decimal', 'numeric(10,2)'),
  column('done', 'boolean', 'boolean'),
  column('meta', 'other', 'jsonb'),
  column('due', 'other', 'date'),
  column('at', 'other', 'timestamp with time zone'),
];
const table: TableInfo = {
  name: 'items',
  columns,
  columnsByName: new Map(columns.map((c) => [c.name, c])),
  primaryKey: ['id'],
};

function read(kind: DialectName, query: string, key?: string): RenderedSql {
  const request = parseTableRequest({
    table: 'items',
    key,
    operation: 'read',
    query: new URLSearchParams(query),
    body: undefined,
    maxRows: 1000,
  });
  if (request.kind !== 'list' && request.kind !== 'get' && request.kind !== 'count')
    throw new Error('not a read');
  return renderSql(dialects[kind], planRead(request, table, undefined, dialects[kind]).statement, ANONYMOUS);
}

const ALL = ['postgres', 'mysql', 'sqlite'] as const;
const cols = (q: string) =>
  ['id', 'title', 'price', 'done', 'meta', 'due', 'at'].map((c) => `${q}${c}${q}`).join(', ');

describe('planRead pins the SQL of every dialect', () => {
  const cases: Record<string, { query: string; key?: string; expected: Record<DialectName, RenderedSql> }> = {
    'a default list': {
      query: '',
      expected: {
        postgres: {
          text: `SELECT ${cols('"')} FROM "items" ORDER BY "id" ASC NULLS LAST LIMIT 100`,
          values: [],
        },
        mysql: {
          text: `SELECT ${cols('`')} FROM \`items\` ORDER BY \`id\` IS NULL ASC, \`id\` ASC LIMIT 100`,
          values: [],
        },
        sqlite: {
          text: `SELECT ${cols('"')} FROM "items" ORDER BY "id" ASC NULLS LAST LIMIT 100`,
          values: [],
        },
      },
    },
    'filters, select, order and page': {
      query: 'select=title&title=eq.a&price=gte.1.5&done=is.true&order=title.desc&page=3&page_size=10',
      expected: {
        postgres: {
          text: 'SELECT "title" FROM "items" WHERE ("title" = $1) AND ("price" >= $2) AND ("done" IS TRUE) ORDER BY "title" DESC NULLS FIRST, "id" ASC NULLS LAST LIMIT 10 OFFSET $3',
          values: ['a', '1.5', 20],
        },
        mysql: {
          text: 'SELECT `title` FROM `items` WHERE (`title` = ? AND CAST(`title` AS BINARY) = CAST(? AS BINARY)) AND (`price` >= ?) AND (`done` IS TRUE) ORDER BY `title` IS NULL DESC, `title` DESC, `id` IS NULL ASC, `id` ASC LIMIT 10 OFFSET ?',
          values: ['a', 'a', '1.5', 20],
        },
        sqlite: {
          text: 'SELECT "title" FROM "items" WHERE ("title" = ?) AND ("price" >= ?) AND ("done" IS TRUE) ORDER BY "title" DESC NULLS FIRST, "id" ASC NULLS LAST LIMIT 10 OFFSET ?',
          values: ['a', '1.5', 20],
        },
      },
    },
    'patterns and lists': {
      query: 'count&title=like.a_b*&title=ilike.*%25x&id=in.(1,2)&meta=is.null',
      expected: {
        postgres: {
          text: `SELECT COUNT(*) AS "count" FROM "items" WHERE ("title" LIKE $1 ESCAPE '!') AND ("title" ILIKE $2 ESCAPE '!') AND ("id" IN ($3, $4)) AND ("meta" IS NULL)`,
          values: ['a!_b%', '%!%x', 1, 2],
        },
        mysql: {
          text: "SELECT COUNT(*) AS `count` FROM `items` WHERE (CAST(`title` AS BINARY) LIKE CAST(? AS BINARY) ESCAPE '!') AND (CAST(LOWER(`title`) AS BINARY) LIKE CAST(LOWER(?) AS BINARY) ESCAPE '!') AND (`id` IN (?, ?)) AND (`meta` IS NULL)",
          values: ['a!_b%', '%!%x', 1, 2],
        },
        sqlite: {
          text: `SELECT COUNT(*) AS "count" FROM "items" WHERE ("title" GLOB ?) AND ("title" LIKE ? ESCAPE '!') AND ("id" IN (?, ?)) AND ("meta" IS NULL)`,
          values: ['a_b*', '%!%x', 1, 2],
        },
      },
    },
    'one row by key': {
      query: 'select=id&title=in.()',
      key: '7',
      expected: {
        postgres: { text: 'SELECT "id" FROM "items" WHERE ("id" = $1) AND (false)', values: [7] },
        mysql: { text: 'SELECT `id` FROM `items` WHERE (`id` = ?) AND (FALSE)', values: [7] },
        sqlite: { text: 'SELECT "id" FROM "items" WHERE ("id" = ?) AND (0)', values: [7] },
      },
    },
  };
  for (const [name, c] of Object.entries(cases)) {
    it.each(ALL)(`${name} (%s)`, (kind) => {
      expect(read(kind, c.query, c.key)).toEqual(c.expected[kind]);
    });
  }

  it('quotes identifiers that contain quotes (names come from the schema)', () => {
    const weird = column('a"b`c', 'text', 'text');
    const t: TableInfo = {
      name: 'x"y',
      columns: [weird],
      columnsByName: new Map([[weird.name, weird]]),
      primaryKey: [],
    };
    const request = parseTableRequest({
      table: t.name,
      key: undefined,
      operation: 'read',
      query: new URLSearchParams('select=a"b`c'),
      body: undefined,
      maxRows: 1000,
    });
    if (request.kind !== 'list') throw new Error('not a list');
    const pg = renderSql(dialects.postgres, planRead(request, t, undefined, dialects.postgres).statement);
    const my = renderSql(dialects.mysql, planRead(request, t, undefined, dialects.mysql).statement);
    expect(pg.text).toBe('SELECT "a""b`c" FROM "x""y" LIMIT 100');
    expect(my.text).toBe('SELECT `a"b``c` FROM `x"y` LIMIT 100');
  });

  it('ANDs the policy predicate into the WHERE', () => {
    const predicate = new SqlBuilder(dialects.postgres)
      .appendIdent('id')
      .append(' = ')
      .appendAuth({ kind: 'id' }, 'bigint')
      .build();
    const where = whereClause({ table, key: undefined, filters: [], predicate }, dialects.postgres);
    expect(renderSql(dialects.postgres, where, { ...ANONYMOUS, id: 5 })).toEqual({
      text: ' WHERE ("id" = $1::bigint)',
      values: [5],
    });
  });

  it.each([
    ['nope=eq.1', 'unknown_column'],
    ['select=nope', 'unknown_column'],
    ['order=nope', 'unknown_column'],
    ['id=eq.abc', 'invalid_value'],
    ['id=like.1*', 'invalid_filter'],
    ['done=eq.yes', 'invalid_value'],
    ['title=is.true', 'invalid_filter'],
    ['meta=eq.{}', 'invalid_filter'],
    ['due=eq.2024-02-30', 'invalid_value'],
    ['at=gt.yesterday', 'invalid_value'],
  ])('%s is 400 %s', (query, code) => {
    const e = errorOf(() => read('postgres', query));
    expect([e.status, e.code]).toEqual([400, code]);
  });
});

describe('write statements', () => {
  it.each(ALL)('insert, update and delete (%s)', (kind) => {
    const d = dialects[kind];
    const row = toWriteRow(table, {
      title: 'x',
      meta: { a: [1] },
      done: true,
      at: '2024-01-02T03:04:05.5+01:00',
    });
    const insert = renderSql(d, insertStatement(table, [row], { columns: [columns[0] as ColumnInfo] }, d));
    const where = whereClause({ table, key: '3', filters: [], predicate: undefined }, d);
    const update = renderSql(
      d,
      updateStatement(table, toWriteRow(table, { price: 2.5 }), where, undefined, d),
    );
    const del = renderSql(d, deleteStatement(table, where, d));
    const expected: Record<DialectName, [string, string, string]> = {
      postgres: [
        'INSERT INTO "items" ("title", "meta", "done", "at") VALUES ($1, $2, $3, $4) RETURNING "id"',
        'UPDATE "items" SET "price" = $1 WHERE ("id" = $2)',
        'DELETE FROM "items" WHERE ("id" = $1)',
      ],
      mysql: [
        'INSERT INTO `items` (`title`, `meta`, `done`, `at`) VALUES (?, ?, ?, ?) RETURNING `id`',
        'UPDATE `items` SET `price` = ? WHERE (`id` = ?)',
        'DELETE FROM `items` WHERE (`id` = ?)',
      ],
      sqlite: [
        'INSERT INTO "items" ("title", "meta", "done", "at") VALUES (?, ?, ?, ?) RETURNING "id"',
        'UPDATE "items" SET "price" = ? WHERE ("id" = ?)',
        'DELETE FROM "items" WHERE ("id" = ?)',
      ],
    };
    expect([insert.text, update.text, del.text]).toEqual(expected[kind]);
    const at = {
      postgres: '2024-01-02T03:04:05.5+01:00',
      mysql: '2024-01-02 02:04:05.5',
      sqlite: '2024-01-02T03:04:05.5+01:00',
    }[kind];
    expect(insert.values).toEqual(['x', '{"a":[1]}', kind === 'sqlite' ? 1 : true, at]);
    expect(update.values).toEqual([2.5, 3]);
  });

  it.each(ALL)('a write hands back its policy check as a flag column (%s)', (kind) => {
    const d = dialects[kind];
    const check = {
      name: checkColumnName(table),
      predicate: new SqlBuilder(d).appendIdent('price').append(' < ').appendValue(100).build(),
    };
    const insert = renderSql(
      d,
      insertStatement(table, [toWriteRow(table, { price: 99.999 })], { columns: [], check }, d),
    );
    const q = (name: string) => d.quoteIdent(name);
    const p = (n: number) => d.placeholder(n);
    expect(insert.text).toBe(
      `INSERT INTO ${q('items')} (${q('price')}) VALUES (${p(1)}) RETURNING CASE WHEN (${q('price')} < ${p(2)}) THEN 1 ELSE 0 END AS ${q('rest_check')}`,
    );
    expect(insert.values).toEqual([99.999, 100]);
    const where = whereClause({ table, key: '3', filters: [], predicate: undefined }, d);
    const read = renderSql(
      d,
      storedRowsStatement(table, where, { columns: [columns[0] as ColumnInfo], check }, d),
    );
    expect(read.text).toBe(
      `SELECT ${q('id')}, CASE WHEN (${q('price')} < ${p(1)}) THEN 1 ELSE 0 END AS ${q('rest_check')} FROM ${q('items')} WHERE (${q('id')} = ${p(2)})`,
    );
  });

  it('names the check column so that it never hides a column of the table', () => {
    const withCheck = {
      ...table,
      columnsByName: new Map([...table.columnsByName, ['rest_check', columns[0] as ColumnInfo]]),
    };
    expect(checkColumnName(withCheck)).toBe('_rest_check');
  });

  it.each(ALL)('an empty row inserts defaults (%s)', (kind) => {
    const text = renderSql(dialects[kind], insertStatement(table, [{}], undefined, dialects[kind])).text;
    expect(
      text.startsWith(
        kind === 'mysql' ? 'INSERT INTO `items` () VALUES ()' : 'INSERT INTO "items" DEFAULT VALUES',
      ),
    ).toBe(true);
  });

  it('several rows are one INSERT naming every column any row sets, DEFAULT where a row leaves one out (postgres)', () => {
    const d = dialects.postgres;
    const rows = [toWriteRow(table, { title: 'a' }), {}, toWriteRow(table, { done: true, title: 'c' })];
    const rendered = renderSql(d, insertStatement(table, rows, { columns: [columns[0] as ColumnInfo] }, d));
    expect(rendered.text).toBe(
      'INSERT INTO "items" ("title", "done") VALUES ($1, DEFAULT), (DEFAULT, DEFAULT), ($2, $3) RETURNING "id"',
    );
    expect(rendered.values).toEqual(['a', 'c', true]);
    expect(renderSql(d, insertStatement(table, [{}, {}], undefined, d)).text).toBe(
      'INSERT INTO "items" ("id") VALUES (DEFAULT), (DEFAULT)',
    );
  });

  it('one INSERT holds as many rows as the protocol can bind values for', () => {
    const limit = Math.floor(65_535 / table.columns.length);
    expect(
      fitsOneInsert(
        table,
        Array.from({ length: limit }, () => ({})),
      ),
    ).toBe(true);
    expect(
      fitsOneInsert(
        table,
        Array.from({ length: limit + 1 }, () => ({})),
      ),
    ).toBe(false);
  });

  it('rejects unknown body keys, __proto__ included, with 400 unknown_column', () => {
    const body = JSON.parse('{"__proto__": {"x": 1}}') as { [k: string]: JsonValue };
    expect(errorOf(() => toWriteRow(table, body)).code).toBe('unknown_column');
    expect(errorOf(() => toWriteRow(table, { 'title"; DROP TABLE items; --': 'x' })).code).toBe(
      'unknown_column',
    );
  });
});

describe('value coercion is the same on every database', () => {
  const c = (name: string) => table.columnsByName.get(name) as ColumnInfo;
  it.each([
    ['id', '42', 42],
    ['id', '-7', -7],
    ['id', '9007199254740993', '9007199254740993'],
    ['price', '1.50', '1.50'],
    ['price', '-2e3', '-2e3'],
    ['done', 'false', false],
    ['title', '', ''],
    ['due', '2024-02-29', '2024-02-29'],
    ['at', '2024-01-02T03:04:05Z', '2024-01-02T03:04:05Z'],
    ['at', '2024-01-02 03:04', '2024-01-02 03:04'],
  ])('query value %s=%s', (name, text, expected) => {
    expect(coerceQueryValue(c(name), text)).toEqual(expected);
  });

  it.each([
    ['id', 1.5],
    ['id', '1.5'],
    ['id', true],
    ['price', 'abc'],
    ['price', {}],
    ['done', 1],
    ['done', 'true'],
    ['title', 5],
    ['title', ['a']],
    ['due', '2023-02-29'],
    ['at', 12],
  ])('body value %s=%j is 400', (name, value) => {
    const e = errorOf(() => coerceBodyValue(c(name), value as JsonValue));
    expect([e.code, e.details]).toEqual(['invalid_value', { column: name }]);
  });

  it.each([
    ['meta', { nested: [1, { b: null }] }],
    ['meta', 'a string'],
    ['meta', null],
    ['title', null],
    ['price', 0.1],
    ['id', '1234567890123456789'],
  ])('body value %s=%j is kept', (name, value) => {
    expect(coerceBodyValue(c(name), value as JsonValue)).toEqual(value);
  });

  it.each([
    ['title', 'a\u0000b'],
    ['title', 'a\uD800b'],
    ['title', '\uDC00'],
    ['title', 'ab\uD83D'],
    ['meta', 'x\u0000'],
    ['meta', { a: ['ok', 'x\uDFFF'] }],
    ['meta', { ['k\uD800']: 1 }],
    ['meta', [{ nested: { ['\u0000']: null } }]],
  ])('body value %s=%j holds NUL or a lone surrogate: 400 on every database', (name, value) => {
    const e = errorOf(() => coerceBodyValue(c(name), value as JsonValue));
    expect([e.code, e.details, e.message]).toEqual([
      'invalid_value',
      { column: name },
      `${name} must be text without NUL characters or lone UTF-16 surrogates`,
    ]);
  });

  it.each([
    ['title', 'a\u0000b'],
    ['title', '\uD800'],
    ['id', '1\u0000'],
  ])('query value %s=%j holds NUL or a lone surrogate: 400', (name, text) => {
    const e = errorOf(() => coerceQueryValue(c(name), text));
    expect([e.code, e.details]).toEqual(['invalid_value', { column: name }]);
    expect(e.message).toMatch(/lone UTF-16 surrogates/);
  });

  it('surrogate pairs (astral characters) are ordinary text', () => {
    expect(coerceBodyValue(c('title'), '😀 \uD83D\uDE00')).toBe('😀 😀');
    expect(coerceBodyValue(c('meta'), { '😀': ['𝄞'] })).toEqual({ '😀': ['𝄞'] });
    expect(coerceQueryValue(c('title'), '𝄞')).toBe('𝄞');
  });
});

describe('declared lengths are checked in-process (SQLite enforces none)', () => {
  it.each([
    ['varchar(3)', 'abc', true],
    ['varchar(3)', 'abcd', false],
    ['character varying(3)', 'abcd', false],
    ['character(2)', 'abc', false],
    ['char(2)', 'ab', true],
    ['nvarchar(2)', '😀😀', true],
    ['varchar(2)', '😀😀😀', false],
    ['text', 'x'.repeat(10_000), true],
    ['varchar', 'x'.repeat(10_000), true],
  ])('%s holds %j: %s', (dbType, value, fits) => {
    const c = column('code', 'text', dbType);
    if (fits) expect(() => checkDeclaredLength(c, value)).not.toThrow();
    else {
      const e = errorOf(() => checkDeclaredLength(c, value));
      expect([e.code, e.details]).toEqual(['invalid_value', { column: 'code' }]);
      expect(e.message).toMatch(new RegExp(`^code is longer than its type .+ allows \\(\\d+ characters\\)$`));
    }
  });

  it('the INSERT and UPDATE statements refuse a value too long for its column, for every dialect', () => {
    const code = column('code', 'text', 'varchar(3)');
    const coded: TableInfo = {
      ...table,
      columns: [...columns, code],
      columnsByName: new Map([...table.columnsByName, ['code', code]]),
    };
    for (const kind of ALL) {
      const d = dialects[kind];
      const where = new SqlBuilder(d).build();
      expect(errorOf(() => insertStatement(coded, [{ code: 'abcd' }], undefined, d)).code).toBe(
        'invalid_value',
      );
      expect(errorOf(() => updateStatement(coded, { code: 'abcd' }, where, undefined, d)).code).toBe(
        'invalid_value',
      );
      expect(() => insertStatement(coded, [{ code: 'abc' }], undefined, d)).not.toThrow();
    }
  });

  it('a filter value is not checked against the length: it just finds nothing', () => {
    expect(coerceQueryValue(column('code', 'text', 'varchar(3)'), 'abcd')).toBe('abcd');
  });
});

describe('timestamp comparisons compare instants on every dialect', () => {
  const filter = (kind: DialectName, query: string): string =>
    read(kind, query).text.split(' WHERE ')[1] ?? '';
  it.each([
    [
      'at=eq.2021-01-01T00:00:00',
      {
        postgres: '("at" = $1) ORDER BY "id" ASC NULLS LAST LIMIT 100',
        mysql: '(`at` = ?) ORDER BY `id` IS NULL ASC, `id` ASC LIMIT 100',
        sqlite: '(julianday("at") = julianday(?)) ORDER BY "id" ASC NULLS LAST LIMIT 100',
      },
    ],
    [
      'at=in.(2021-01-01,2021-01-02T10:30)',
      {
        postgres: '("at" IN ($1, $2)) ORDER BY "id" ASC NULLS LAST LIMIT 100',
        mysql: '(`at` IN (?, ?)) ORDER BY `id` IS NULL ASC, `id` ASC LIMIT 100',
        sqlite: '(julianday("at") IN (julianday(?), julianday(?))) ORDER BY "id" ASC NULLS LAST LIMIT 100',
      },
    ],
  ] as const)('%s', (query, expected) => {
    for (const kind of ALL) expect([kind, filter(kind, query)]).toEqual([kind, expected[kind]]);
  });

  it('orders a timestamp column as it compares it', () => {
    const order = (kind: DialectName): string =>
      read(kind, 'order=at.desc').text.split(' ORDER BY ')[1] ?? '';
    expect(ALL.map((kind) => [kind, order(kind)])).toEqual([
      ['postgres', '"at" DESC NULLS FIRST, "id" ASC NULLS LAST LIMIT 100'],
      ['mysql', '`at` IS NULL DESC, `at` DESC, `id` IS NULL ASC, `id` ASC LIMIT 100'],
      ['sqlite', 'julianday("at") DESC NULLS FIRST, "id" ASC NULLS LAST LIMIT 100'],
    ]);
  });

  it.each([
    ['2021-01-01T00:00:00+02', '2021-01-01T00:00:00+02:00'],
    ['2021-01-01T00:00:00.5-0530', '2021-01-01T00:00:00.5-05:30'],
    ['2021-01-01T00:00:00+02:00', '2021-01-01T00:00:00+02:00'],
    ['2021-01-01 00:00Z', '2021-01-01 00:00Z'],
    ['2021-01-01', '2021-01-01'],
    ['2021-01-01T10:00', '2021-01-01T10:00'],
  ])('SQLite binds %s as %s (the offset form its date functions read)', (text, bound) => {
    expect(sqliteTimestamp(text)).toBe(bound);
  });
});

describe('ranges are checked in-process (SQLite enforces none)', () => {
  const col = (dbType: string, type: ColumnType = 'integer') => column('n', type, dbType);
  it.each([
    ['smallint', 32767, true],
    ['smallint', 32768, false],
    ['smallint', -32768, true],
    ['int2', -32769, false],
    ['tinyint(4)', 127, true],
    ['tinyint(4)', 128, false],
    ['tinyint(3) unsigned', 255, true],
    ['tinyint(3) unsigned', -1, false],
    ['mediumint(9)', 8388608, false],
    ['integer', '9223372036854775807', true],
    ['bigint', '9223372036854775808', false],
    ['bigint(20) unsigned', '18446744073709551615', true],
  ])('%s holds %s: %s', (dbType, value, fits) => {
    const c = col(dbType);
    if (fits) expect(coerceBodyValue(c, value)).toEqual(value);
    else
      expect(errorOf(() => coerceBodyValue(c, value)).message).toBe(
        `n is out of range for its type ${dbType}`,
      );
  });

  it.each([
    ['numeric(5,2)', '999.99', true],
    ['numeric(5,2)', 1000, false],
    ['decimal(20,6)', '1e30', false],
    ['numeric', '1e30', true],
    ['double precision', 1e300, true],
  ])('%s holds %s: %s', (dbType, value, fits) => {
    const c = col(dbType, 'decimal');
    if (fits) expect(coerceQueryValue(c, String(value))).toEqual(String(value));
    else expect(errorOf(() => coerceQueryValue(c, String(value))).code).toBe('invalid_value');
  });
});
