import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RestError } from '../../../../errors/rest-error.js';
import { parseDbUrl, redactDbUrl } from '../../../../runtime/db/parse-db-url.js';

describe('parseDbUrl', () => {
  it.each([
    [
      'postgres://alice:pw@db.example:6543/app',
      {
        kind: 'postgres',
        host: 'db.example',
        port: 6543,
        user: 'alice',
        database: 'app',
        display: 'postgres://alice:***@db.example:6543/app',
      },
    ],
    [
      'postgresql://localhost/app',
      {
        kind: 'postgres',
        host: 'localhost',
        port: 5432,
        user: '',
        database: 'app',
        display: 'postgresql://localhost/app',
      },
    ],
    [
      'postgres:///app',
      {
        kind: 'postgres',
        host: 'localhost',
        port: 5432,
        user: '',
        database: 'app',
        display: 'postgres:///app',
      },
    ],
    [
      'mysql://root@127.0.0.1/test',
      {
        kind: 'mysql',
        host: '127.0.0.1',
        port: 3306,
        user: 'root',
        database: 'test',
        display: 'mysql://root@127.0.0.1/test',
      },
    ],
    [
      'mariadb://u%40x:p%2Fw@[::1]:3307/d%20b',
      {
        kind: 'mysql',
        host: '::1',
        port: 3307,
        user: 'u@x',
        database: 'd b',
        display: 'mariadb://u%40x:***@[::1]:3307/d%20b',
      },
    ],
    ['sqlite://:memory:', { kind: 'sqlite', path: ':memory:', display: 'sqlite://:memory:' }],
    [
      'sqlite:///var/lib/rest.db',
      { kind: 'sqlite', path: '/var/lib/rest.db', display: 'sqlite:///var/lib/rest.db' },
    ],
    [
      'sqlite://./rest.db',
      { kind: 'sqlite', path: resolve(process.cwd(), 'rest.db'), display: 'sqlite://./rest.db' },
    ],
    [
      'SQLITE://data/x.db',
      { kind: 'sqlite', path: resolve(process.cwd(), 'data/x.db'), display: 'sqlite://data/x.db' },
    ],
  ])('parses %s', (url, expected) => {
    expect(parseDbUrl(url)).toStrictEqual(expected);
  });

  it.each([
    ['', /expected postgres:/],
    ['rest.db', /expected postgres:/],
    ['http://host/db', /expected postgres:/],
    ['mysql://host', /must name one database/],
    ['mysql://host/a/b', /must name one database/],
    ['mysql:///db', /must name a host/],
    ['postgres://host:notaport/db', /is not a URL/],
    ['sqlite://', /needs a file path/],
    ['sqlite:rest.db', /look like sqlite:\/\//],
    ['sqlite://x.db?mode=ro', /no query string/],
  ])('rejects %j as a usage error', (url, message) => {
    let error: unknown;
    try {
      parseDbUrl(url);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RestError);
    expect([(error as RestError).category, (error as RestError).code]).toStrictEqual([
      'usage',
      'invalid_db_url',
    ]);
    expect((error as RestError).message).toMatch(message);
  });

  it('never puts the password into an error message', () => {
    expect(() => parseDbUrl('postgres://u:hunter2@host:bad/db')).toThrow(/^(?!.*hunter2)/);
    expect(redactDbUrl('mysql://u:hunter2@h/db')).toBe('mysql://u:***@h/db');
    expect(redactDbUrl('::::')).toBe('<unparsable URL>');
  });
});
