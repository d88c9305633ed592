import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RestError } from '../../../../errors/rest-error.js';
import { parseDbUrl, pgDriverUrl, redactDbUrl } from '../../../../runtime/db/parse-db-url.js';

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
    [
      'postgres://host/db?sslmode=requir',
      /sslmode 'requir' is not one of disable, allow, prefer, require, verify-ca, verify-full/,
    ],
    ['postgres://host/db?ssl=yes', /ssl 'yes' is not one of true, false, 1, 0, no-verify/],
    ['postgres://host/db?sslmode=verify-ca', /sslmode=verify-ca needs sslrootcert=/],
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
    expect(redactDbUrl('postgres://h/db?sslmode=require&password=hunter2&sslpassword=x')).toBe(
      'postgres://h/db?sslmode=require&password=***&sslpassword=***',
    );
  });
});

describe('pgDriverUrl', () => {
  it.each([
    ['postgres://h/db', 'postgres://h/db'],
    ['postgres://h/db?ssl=true', 'postgres://h/db?ssl=true'],
    ['postgres://h/db?sslmode=require', 'postgres://h/db?sslmode=require&uselibpqcompat=true'],
    ['postgres://h/db?sslmode=allow', 'postgres://h/db?sslmode=disable&uselibpqcompat=true'],
    ['postgres://h/db?ssl=false', 'postgres://h/db?ssl=0'],
    [
      'postgres://u:p@h/db?sslmode=verify-ca&sslrootcert=/etc/ssl/ca.pem&uselibpqcompat=false',
      'postgres://u:p@h/db?sslmode=verify-ca&sslrootcert=/etc/ssl/ca.pem&uselibpqcompat=true',
    ],
  ])('%s → %s', (url, expected) => {
    expect(pgDriverUrl(url)).toBe(expected);
  });

  it('is invisible in what is shown of the URL', () => {
    const url = 'postgres://u:p@h/db?sslmode=require&sslrootcert=/etc/ssl/ca.pem';
    expect(parseDbUrl(pgDriverUrl(url)).display).toBe(
      'postgres://u:***@h/db?sslmode=require&sslrootcert=/etc/ssl/ca.pem',
    );
  });
});
