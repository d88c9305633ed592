import { describe, expect, it } from 'vitest';
import { parseConfigFile } from '../../../cli/config/config-file.js';
import { loadConfig, type ConfigSources } from '../../../cli/config/load-config.js';
import { normalizeArgv } from '../../../cli/config/normalize-argv.js';
import { parseDuration, parseListenAddress, parseSwitch } from '../../../cli/config/parse-values.js';
import { errorOf } from '../../support/thrown.js';

const SECRET = 'x'.repeat(32);

const files = (content: Record<string, string>) => (path: string) => {
  const text = content[path];
  if (text === undefined) throw Object.assign(new Error('missing'), { code: 'ENOENT' });
  return text;
};

const load = (sources: Partial<ConfigSources>) => loadConfig({ flags: {}, env: {}, ...sources });

describe('normalizeArgv', () => {
  it.each([
    [
      ['-db.url', 'x'],
      ['--db.url', 'x'],
    ],
    [['-db.url=sqlite://a=b'], ['--db.url=sqlite://a=b']],
    [
      ['--addr', ':0'],
      ['--addr', ':0'],
    ],
    [
      ['-addr', ':0', 'serve'],
      ['--addr', ':0', 'serve'],
    ],
    [['-h'], ['-h']],
    [['-help'], ['--help']],
    [
      ['-auth.token_ttl', '1h'],
      ['--auth.token_ttl', '1h'],
    ],
    [
      ['auth', 'user', 'add', 'bob', '--', '-weird-password'],
      ['auth', 'user', 'add', 'bob', '--', '-weird-password'],
    ],
    [['-5'], ['-5']],
  ])('%j → %j', (input, expected) => {
    expect(normalizeArgv(input)).toEqual(expected);
  });

  // Go's flag package: a flag that takes a value takes the next argument, whatever it begins with.
  const valueFlags = new Set(['auth.secret', 'addr', 'db.url']);
  it.each([
    [
      ['-auth.secret', '-h-xyz', 'serve'],
      ['--auth.secret=-h-xyz', 'serve'],
    ],
    [['--auth.secret', '--abc'], ['--auth.secret=--abc']],
    [
      ['-addr', ':0', '-db.url', 'sqlite://x'],
      ['--addr=:0', '--db.url=sqlite://x'],
    ],
    [
      ['-auth.secret=-a', '-h'],
      ['--auth.secret=-a', '-h'],
    ],
    [['-auth.secret'], ['--auth.secret']],
    [
      ['auth', 'policy', 'edit', '--table', '-t'],
      ['auth', 'policy', 'edit', '--table', '-t'],
    ],
    [
      ['--', '-db.url', 'x'],
      ['--', '-db.url', 'x'],
    ],
  ])('with value flags: %j → %j', (input, expected) => {
    expect(normalizeArgv(input, valueFlags)).toEqual(expected);
  });
});

describe('value parsers', () => {
  it.each([
    [':3000', { host: undefined, port: 3000 }],
    ['127.0.0.1:0', { host: '127.0.0.1', port: 0 }],
    ['localhost:8080', { host: 'localhost', port: 8080 }],
    ['[::1]:9', { host: '::1', port: 9 }],
  ])('addr %s', (text, expected) => {
    expect(parseListenAddress(text)).toEqual(expected);
  });

  it.each(['3000', ':', ':70000', 'host:', 'a:b:1', ':-1'])('addr %s is a usage error', (text) => {
    const e = errorOf(() => parseListenAddress(text));
    expect([e.category, e.code]).toEqual(['usage', 'invalid_config']);
  });

  it.each([
    ['24h', 86400],
    ['90m', 5400],
    ['1h30m', 5400],
    ['3600s', 3600],
    ['2d', 172800],
    ['3600', 3600],
    [60, 60],
  ])('duration %s = %d s', (text, seconds) => {
    expect(parseDuration(text, 'auth.token_ttl')).toBe(seconds);
  });

  it.each(['', '0', '0s', '1x', 'h', '-5m', '5 m'])('duration %j is rejected', (text) => {
    expect(errorOf(() => parseDuration(text, 'auth.token_ttl')).message).toMatch(
      /auth.token_ttl '[^']*' is not a duration/,
    );
  });

  it.each([
    ['on', true],
    ['OFF', false],
    ['true', true],
    ['0', false],
  ])('switch %s', (text, value) => {
    expect(parseSwitch(text, 'db.rls')).toBe(value);
  });
});

describe('loadConfig', () => {
  it('has the defaults of docs/operations.md', () => {
    expect(load({})).toEqual({
      addr: { host: undefined, port: 3000 },
      workers: 1,
      db: { url: 'sqlite://./rest.db', rls: false, statementTimeoutMs: 10_000 },
      auth: {
        enabled: false,
        disabledExplicitly: false,
        secret: null,
        tokenTtlSeconds: 86400,
        refreshTtlSeconds: 2_592_000,
      },
      cors: { enabled: false, origins: [] },
      http: { trustProxy: false, maxRows: 1000 },
    });
  });

  it('turns rls on by default for PostgreSQL only', () => {
    expect(load({ flags: { 'db.url': 'postgres://h/db' } }).db.rls).toBe(true);
    expect(load({ flags: { 'db.url': 'postgresql://h/db', 'db.rls': 'off' } }).db.rls).toBe(false);
    expect(load({ flags: { 'db.url': 'mysql://h/db' } }).db.rls).toBe(false);
  });

  it('reads http.trust_proxy from the flag, REST_HTTP_TRUST_PROXY or http: {trust_proxy} (default off)', () => {
    expect(load({}).http.trustProxy).toBe(false);
    expect(load({ flags: { 'http.trust_proxy': 'on' } }).http.trustProxy).toBe(true);
    expect(load({ env: { REST_HTTP_TRUST_PROXY: 'true' } }).http.trustProxy).toBe(true);
    const readFile = files({ 'rest.yml': 'http: {trust_proxy: true}' });
    expect(load({ flags: { config: 'rest.yml' }, readFile }).http.trustProxy).toBe(true);
    expect(load({ flags: { config: 'rest.yml', 'http.trust_proxy': 'off' }, readFile }).http.trustProxy).toBe(
      false,
    );
    expect(errorOf(() => load({ env: { REST_HTTP_TRUST_PROXY: 'maybe' } })).message).toMatch(
      /http.trust_proxy '[^']*' is not on or off/,
    );
  });

  it('reads http.console from the flag, REST_HTTP_CONSOLE or http: {console} (absent: on)', () => {
    expect(load({}).http.console).toBeUndefined();
    expect(load({ flags: { 'http.console': 'off' } }).http.console).toBe(false);
    expect(load({ env: { REST_HTTP_CONSOLE: 'on' } }).http.console).toBe(true);
    const readFile = files({ 'rest.yml': 'http: {console: false}' });
    expect(load({ flags: { config: 'rest.yml' }, readFile }).http.console).toBe(false);
    expect(errorOf(() => load({ env: { REST_HTTP_CONSOLE: 'maybe' } })).message).toMatch(
      /http.console '[^']*' is not on or off/,
    );
  });

  it('refuses rls on for other databases', () => {
    expect(errorOf(() => load({ env: { REST_DB_RLS: 'on' } })).message).toMatch(/db.rls on needs PostgreSQL/);
  });

  it('takes flag > env > file > default for every setting', () => {
    const yml = [
      'addr: "127.0.0.1:1111"',
      'workers: 2',
      'db: {url: "sqlite://file.db", rls: off}',
      `auth: {secret: "${'f'.repeat(40)}", token_ttl: 60, refresh_ttl: 7d}`,
      'cors: {enabled: true, origins: ["https://a.example"]}',
    ].join('\n');
    const readFile = files({ 'rest.yml': yml });
    const fileOnly = load({ flags: { config: 'rest.yml' }, readFile });
    expect(fileOnly).toEqual({
      addr: { host: '127.0.0.1', port: 1111 },
      workers: 2,
      db: { url: 'sqlite://file.db', rls: false, statementTimeoutMs: 10_000 },
      auth: {
        enabled: true,
        disabledExplicitly: false,
        secret: 'f'.repeat(40),
        tokenTtlSeconds: 60,
        refreshTtlSeconds: 7 * 86400,
      },
      cors: { enabled: true, origins: ['https://a.example'] },
      http: { trustProxy: false, maxRows: 1000 },
    });
    const env = {
      REST_CONFIG: 'rest.yml',
      REST_ADDR: ':2222',
      REST_DB_URL: 'sqlite://env.db',
      REST_AUTH_SECRET: 'e'.repeat(32),
      REST_AUTH_TOKEN_TTL: '2m',
      REST_AUTH_REFRESH_TTL: '12h',
    };
    const envWins = load({ env, readFile });
    expect([envWins.addr.port, envWins.db.url, envWins.auth.secret, envWins.auth.tokenTtlSeconds]).toEqual([
      2222,
      'sqlite://env.db',
      'e'.repeat(32),
      120,
    ]);
    expect(envWins.auth.refreshTtlSeconds).toBe(12 * 3600);
    const flags = {
      addr: ':3333',
      'db.url': 'sqlite://flag.db',
      'auth.secret': SECRET,
      'auth.token_ttl': '3s',
      'auth.refresh_ttl': '1h',
    };
    const flagWins = load({ flags, env, readFile });
    expect([
      flagWins.addr.port,
      flagWins.db.url,
      flagWins.auth.secret,
      flagWins.auth.tokenTtlSeconds,
    ]).toEqual([3333, 'sqlite://flag.db', SECRET, 3]);
    expect(flagWins.auth.refreshTtlSeconds).toBe(3600);
    expect(load({ env: { REST_WORKERS: '3' }, readFile }).workers).toBe(3);
    expect(load({ flags: { workers: '4' }, env: { REST_WORKERS: '3' } }).workers).toBe(4);
    expect(() => load({ flags: { workers: '0' } })).toThrow(/workers '0'/);
    expect(() => load({ flags: { workers: '65' } })).toThrow(/workers '65' is more than 64/);
    expect(() => load({ flags: { 'auth.refresh_ttl': 'soon' } })).toThrow(/auth\.refresh_ttl 'soon'/);
  });

  it('reads the config path from REST_CONFIG, a flag overriding it', () => {
    const readFile = files({ 'a.yml': 'addr: ":1"', 'b.yml': 'addr: ":2"' });
    expect(load({ env: { REST_CONFIG: 'a.yml' }, readFile }).addr.port).toBe(1);
    expect(load({ flags: { config: 'b.yml' }, env: { REST_CONFIG: 'a.yml' }, readFile }).addr.port).toBe(2);
  });

  it('treats an empty environment variable as unset, except the secret', () => {
    expect(load({ env: { REST_ADDR: '', REST_DB_URL: '', REST_AUTH_ENABLED: '' } }).addr.port).toBe(3000);
  });

  it.each([
    ['an empty flag', { flags: { 'auth.secret': '' } }, /^-auth\.secret is empty; refusing to start/],
    ['a blank flag', { flags: { 'auth.secret': ' \t ' } }, /^-auth\.secret is empty/],
    ['an empty variable', { env: { REST_AUTH_SECRET: '' } }, /^REST_AUTH_SECRET is empty/],
    [
      'an empty variable over a file secret',
      { env: { REST_AUTH_SECRET: '', REST_CONFIG: 'c.yml' } },
      /^REST_AUTH_SECRET is empty/,
    ],
    ['an empty string in the file', { flags: { config: 'e.yml' } }, /^auth\.secret in e\.yml is empty/],
    ['a key without a value in the file', { flags: { config: 'n.yml' } }, /^auth\.secret in n\.yml is empty/],
  ])('refuses a secret given as %s, naming the setting', (_name, sources, message) => {
    const readFile = files({
      'c.yml': `auth: {secret: "${SECRET}"}`,
      'e.yml': 'auth: {secret: "  "}',
      'n.yml': 'auth:\n  secret:\n',
    });
    const e = errorOf(() => load({ ...sources, readFile }));
    expect([e.category, e.code]).toEqual(['usage', 'empty_secret']);
    expect(e.message).toMatch(message);
  });

  it('switches auth off explicitly from a flag, the environment or the file', () => {
    const readFile = files({ 'off.yml': 'auth: {enabled: false}', 'on.yml': 'auth: {enabled: true}' });
    const off = {
      enabled: false,
      disabledExplicitly: true,
      secret: null,
      tokenTtlSeconds: 86400,
      refreshTtlSeconds: 2_592_000,
    };
    expect(load({ flags: { 'auth.enabled': 'false' } }).auth).toEqual(off);
    expect(load({ env: { REST_AUTH_ENABLED: 'off' } }).auth).toEqual(off);
    expect(load({ flags: { config: 'off.yml' }, readFile }).auth).toEqual(off);
    expect(load({ flags: { config: 'on.yml', 'auth.enabled': 'false' }, readFile }).auth).toEqual(off);
    const secret = { flags: { 'auth.enabled': 'true', 'auth.secret': SECRET } };
    expect(load(secret).auth).toMatchObject({ enabled: true, disabledExplicitly: false });
  });

  it.each([
    [
      'true without a secret',
      { flags: { 'auth.enabled': 'true' } },
      /auth.enabled is true but no auth.secret/,
    ],
    [
      'false with a secret',
      { env: { REST_AUTH_ENABLED: 'false', REST_AUTH_SECRET: SECRET } },
      /auth.enabled is false but auth.secret is set/,
    ],
    ['a bare flag', { flags: { 'auth.enabled': '' } }, /auth.enabled '' is not on or off/],
    ['a bad value', { env: { REST_AUTH_ENABLED: 'maybe' } }, /auth.enabled 'maybe' is not on or off/],
  ])('refuses auth.enabled %s', (_name, sources, message) => {
    const e = errorOf(() => load(sources));
    expect(e.category).toBe('usage');
    expect(e.message).toMatch(message);
  });

  it('refuses a secret under 32 bytes, counting bytes not characters, without echoing it', () => {
    const e = errorOf(() => load({ flags: { 'auth.secret': 'short-secret' } }));
    expect([e.category, e.code]).toEqual(['usage', 'weak_secret']);
    expect(e.message).not.toContain('short-secret');
    expect(load({ flags: { 'auth.secret': 'é'.repeat(16) } }).auth.enabled).toBe(true);
    expect(errorOf(() => load({ flags: { 'auth.secret': 'é'.repeat(15) + 'x' } })).code).toBe('weak_secret');
  });

  it('rejects a contradictory auth.enabled', () => {
    const on = files({ 'c.yml': 'auth: {enabled: true}' });
    expect(errorOf(() => load({ flags: { config: 'c.yml' }, readFile: on })).message).toMatch(
      /no auth.secret/,
    );
    const off = files({ 'c.yml': 'auth: {enabled: false}' });
    expect(
      errorOf(() => load({ flags: { config: 'c.yml', 'auth.secret': SECRET }, readFile: off })).message,
    ).toMatch(/auth.enabled is false/);
  });

  it.each([
    ['a missing file', undefined, /config file c.yml: no such file/],
    ['broken YAML', 'db: {url: [', /config file c.yml: invalid YAML at line \d+, column \d+/],
    ['an unknown key', 'db: {ulr: x}', /unknown setting db.ulr/],
    ['a wrong type', 'cors: {origins: "x"}', /cors.origins must be a list of strings/],
    ['a wrong nested type', 'auth: 5', /auth must be a mapping/],
    ['a list document', '- a', /the document must be a mapping/],
  ])('reports %s in one line', (_name, text, message) => {
    const readFile = files(text === undefined ? {} : { 'c.yml': text });
    const e = errorOf(() => load({ flags: { config: 'c.yml' }, readFile }));
    expect(e.category).toBe('usage');
    expect(e.message).toMatch(message);
    expect(e.message).not.toContain('\n');
  });

  it('accepts an empty file and empty keys', () => {
    expect(parseConfigFile('', 'e.yml')).toEqual({});
    expect(parseConfigFile('db:\n  url:\n', 'e.yml')).toEqual({ db: {} });
  });
});
