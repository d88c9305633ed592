// Parses `-db.url` (docs/operations.md) into what an adapter needs; the parsed value never holds a password.

import { resolve } from 'node:path';
import { quoteValue } from '../../errors/quote-value.js';
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
  new RestError('invalid_db_url', `Invalid database URL: ${why}.`);

/** libpq's sslmode values (https://www.postgresql.org/docs/current/libpq-ssl.html#LIBPQ-SSL-PROTECTION). */
const SSL_MODES: readonly string[] = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'];
/** pg's `ssl` parameter: on (verify-full), off, or pg's own no-verify. */
const SSL_VALUES: readonly string[] = ['true', 'false', '1', '0', 'no-verify'];
/** Makes pg (pg-connection-string ≥ 2.9) give sslmode its libpq meaning, without its warning. */
const LIBPQ_COMPAT = 'uselibpqcompat';

/** Query parameters that carry a password (pg reads `password` from the query string too). */
const SECRET_PARAMS: readonly string[] = ['password', 'sslpassword'];

/**
 * Rewrites the query parameters of `u` one by one as written (URLSearchParams would re-encode
 * all of them, e.g. a path in sslrootcert); `edit` returns the new `key=value` text or null to drop it.
 */
function editQuery(u: URL, edit: (key: string, part: string) => string | null): void {
  const parts = u.search
    .slice(1)
    .split('&')
    .filter((part) => part !== '')
    .flatMap((part) => {
      const edited = edit(decodeURIComponent(part.split('=')[0] ?? ''), part);
      return edited === null ? [] : [edited];
    });
  u.search = parts.length === 0 ? '' : `?${parts.join('&')}`;
}

/** Removes the passwords so the URL can be shown; returns a placeholder when it does not parse. */
export function redactDbUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    editQuery(u, (key, part) =>
      key === LIBPQ_COMPAT ? null : SECRET_PARAMS.includes(key) ? `${key}=***` : part,
    );
    return u.toString();
  } catch {
    return '<unparsable URL>';
  }
}

function checkPgSsl(params: URLSearchParams): void {
  const mode = params.get('sslmode');
  if (mode !== null && !SSL_MODES.includes(mode)) {
    throw invalidDbUrl(`sslmode ${quoteValue(mode)} is not one of ${SSL_MODES.join(', ')}`);
  }
  const ssl = params.get('ssl');
  if (ssl !== null && !SSL_VALUES.includes(ssl)) {
    throw invalidDbUrl(`ssl ${quoteValue(ssl)} is not one of ${SSL_VALUES.join(', ')}`);
  }
  // libpq cannot check a CA it was not given; pg would throw a paragraph at connect time.
  if (mode === 'verify-ca' && !params.has('sslrootcert')) {
    throw invalidDbUrl('sslmode=verify-ca needs sslrootcert=<file of the CA certificate>');
  }
}

/**
 * The URL as every pg client of the process is given it: `sslmode` with its libpq meaning (pg's
 * default treats prefer, require and verify-ca as verify-full and prints a warning), and
 * `ssl=false` as pg understands it (it reads only "0" as off). pg cannot fall back between plain
 * and SSL connections: `allow` connects without SSL, `prefer` with SSL (without verifying the
 * certificate, as libpq). Other URLs are returned unchanged.
 */
export function pgDriverUrl(url: string): string {
  const u = new URL(url);
  const mode = u.searchParams.has('sslmode');
  if (!mode && u.searchParams.get('ssl') !== 'false') return url;
  editQuery(u, (key, part) => {
    if (key === LIBPQ_COMPAT) return null;
    if (part === 'sslmode=allow') return 'sslmode=disable';
    return part === 'ssl=false' ? 'ssl=0' : part;
  });
  if (mode) u.search = `${u.search}&${LIBPQ_COMPAT}=true`;
  return u.toString();
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
  if (kind === 'postgres') checkPgSsl(u.searchParams);
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
