// Parses `-db.url` (SPEC §1) into what an adapter needs; the parsed value never holds a password.

import { resolve } from 'node:path';
import { RestError } from '../../errors/rest-error.js';
import type { DialectName } from '../../compiler/types.js';

interface NetworkDbUrl {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly database: string;
  /** The URL without its password, for messages and logs. */
  readonly display: string;
}

export type DbUrl =
  | ({ readonly kind: 'postgres' } & NetworkDbUrl)
  | ({ readonly kind: 'mysql' } & NetworkDbUrl)
  | {
      readonly kind: 'sqlite';
      /** Absolute file path (relative URLs resolve against the cwd), or `:memory:`. */
      readonly path: string;
      readonly display: string;
    };

const SCHEMES: Readonly<Record<string, DialectName>> = {
  'postgres:': 'postgres',
  'postgresql:': 'postgres',
  'mysql:': 'mysql',
  'mariadb:': 'mysql',
  'sqlite:': 'sqlite',
};

const DEFAULT_PORT: Readonly<Record<Exclude<DialectName, 'sqlite'>, number>> = {
  postgres: 5432,
  mysql: 3306,
};

const SQLITE_PREFIX = 'sqlite://';

const EXPECTED =
  'expected postgres://…, postgresql://…, mysql://…, mariadb://…, sqlite://<path> or sqlite://:memory:';

export const invalidDbUrl = (why: string): RestError =>
  new RestError('usage', 'invalid_db_url', `Invalid database URL: ${why}.`);

/** Removes the password so the URL can be shown; returns a placeholder when it does not parse. */
export function redactDbUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    return u.toString();
  } catch {
    return '<unparsable URL>';
  }
}

export function parseDbUrl(url: string): DbUrl {
  const scheme = /^([a-z][a-z0-9+.-]*:)/i.exec(url)?.[1]?.toLowerCase();
  const kind = scheme === undefined ? undefined : SCHEMES[scheme];
  if (kind === undefined) throw invalidDbUrl(EXPECTED);
  if (kind === 'sqlite') return parseSqliteUrl(url);
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw invalidDbUrl(`${redactDbUrl(url)} is not a URL`);
  }
  const database = decodeURIComponent(u.pathname.replace(/^\//, ''));
  if (kind === 'mysql' && (database === '' || database.includes('/'))) {
    throw invalidDbUrl('a MySQL/MariaDB URL must name one database, as in mysql://user@host:3306/dbname');
  }
  const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
  if (kind === 'mysql' && host === '') throw invalidDbUrl('a MySQL/MariaDB URL must name a host');
  return {
    kind,
    host: host === '' ? 'localhost' : host,
    port: u.port === '' ? DEFAULT_PORT[kind] : Number(u.port),
    user: decodeURIComponent(u.username),
    database,
    display: redactDbUrl(url),
  };
}

function parseSqliteUrl(url: string): DbUrl {
  if (!url.toLowerCase().startsWith(SQLITE_PREFIX))
    throw invalidDbUrl(`SQLite URLs look like sqlite://./rest.db (got ${url})`);
  const raw = url.slice(SQLITE_PREFIX.length);
  if (raw === '') throw invalidDbUrl('sqlite:// needs a file path or :memory:');
  if (raw.includes('?') || raw.includes('#'))
    throw invalidDbUrl('SQLite URLs take no query string or fragment');
  const path = raw === ':memory:' ? raw : resolve(process.cwd(), raw);
  return { kind: 'sqlite', path, display: `sqlite://${raw}` };
}
