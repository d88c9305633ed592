// Flags > environment > YAML file > defaults (docs/cli.md) → the validated runtime Config.

import {
  DEFAULT_ADDR,
  DEFAULT_DB_URL,
  DEFAULT_MAX_ROWS,
  DEFAULT_STATEMENT_TIMEOUT_MS,
  DEFAULT_REFRESH_TTL_SECONDS,
  DEFAULT_TOKEN_TTL_SECONDS,
  MIN_SECRET_BYTES,
  type Config,
} from '../../runtime/config.js';
import { RestError } from '../../errors/rest-error.js';
import { parseDbUrl, pgDriverUrl } from '../../runtime/db/parse-db-url.js';
import { readConfigFile, type FileConfig } from './config-file.js';
import type { GlobalArgs } from './global-options.js';
import {
  configError,
  parseDuration,
  parseListenAddress,
  parsePositiveInteger,
  parseSwitch,
  parseTimeout,
} from './parse-values.js';

export type Env = Readonly<Record<string, string | undefined>>;

export interface ConfigSources {
  readonly flags: GlobalArgs;
  readonly env: Env;
  /** Reads the config file (default: the file system). */
  readonly readFile?: (path: string) => string;
  /** Settings in the config file's shape, given instead of a file (the library); already checked. */
  readonly settings?: FileConfig;
}

export const ENV = {
  dbUrl: 'REST_DB_URL',
  addr: 'REST_ADDR',
  secret: 'REST_AUTH_SECRET',
  authEnabled: 'REST_AUTH_ENABLED',
  tokenTtl: 'REST_AUTH_TOKEN_TTL',
  refreshTtl: 'REST_AUTH_REFRESH_TTL',
  rls: 'REST_DB_RLS',
  statementTimeout: 'REST_DB_STATEMENT_TIMEOUT',
  pooler: 'REST_DB_POOLER',
  listenUrl: 'REST_DB_LISTEN_URL',
  maxRows: 'REST_HTTP_MAX_ROWS',
  maxWaiting: 'REST_DB_MAX_WAITING',
  trustProxy: 'REST_HTTP_TRUST_PROXY',
  console: 'REST_HTTP_CONSOLE',
  workers: 'REST_WORKERS',
  config: 'REST_CONFIG',
} as const;

/** The first value that is set; an empty string counts as not set. */
function pick<T>(...values: ReadonlyArray<T | undefined>): T | undefined {
  return values.find((v) => v !== undefined && v !== '');
}

/**
 * The secret from the first source that gives one. Unlike other settings, a secret given but empty
 * or only whitespace is an error, not "unset": it would turn auth off (docs/cli.md "Fail closed").
 */
function secretSetting(
  flags: GlobalArgs,
  env: Env,
  file: FileConfig,
  configPath: string,
): string | undefined {
  const sources: ReadonlyArray<readonly [string | undefined, string]> = [
    [flags['auth.secret'], '-auth.secret'],
    [env[ENV.secret], ENV.secret],
    [file.auth?.secret, `auth.secret in ${configPath}`],
  ];
  const given = sources.find(([value]) => value !== undefined);
  if (given === undefined) return undefined;
  const [secret, from] = given;
  if (secret === undefined || secret.trim() === '') {
    throw new RestError(
      'empty_secret',
      `${from} is empty; refusing to start (give a secret of at least ${MIN_SECRET_BYTES} bytes, or leave the setting out)`,
    );
  }
  if (Buffer.byteLength(secret, 'utf8') < MIN_SECRET_BYTES) {
    throw new RestError(
      'weak_secret',
      `auth.secret must be at least ${MIN_SECRET_BYTES} bytes long; refusing to start`,
    );
  }
  return secret;
}

function authSettings(flags: GlobalArgs, env: Env, file: FileConfig, configPath: string): Config['auth'] {
  const secret = secretSetting(flags, env, file, configPath);
  // A bare `-auth.enabled` arrives as "" and is refused by parseSwitch rather than ignored.
  const enabledSetting =
    flags['auth.enabled'] ?? pick<string | boolean>(env[ENV.authEnabled], file.auth?.enabled);
  const enabled = enabledSetting === undefined ? undefined : parseSwitch(enabledSetting, 'auth.enabled');
  if (enabled === true && secret === undefined) {
    throw configError(
      'auth.enabled is true but no auth.secret is configured (-auth.secret or REST_AUTH_SECRET)',
    );
  }
  if (enabled === false && secret !== undefined) {
    throw configError(
      'auth.enabled is false but auth.secret is set: auth is on exactly when a secret is configured; remove one of them',
    );
  }
  const ttl = pick<string | number>(flags['auth.token_ttl'], env[ENV.tokenTtl], file.auth?.token_ttl);
  const refreshTtl = pick<string | number>(
    flags['auth.refresh_ttl'],
    env[ENV.refreshTtl],
    file.auth?.refresh_ttl,
  );
  return {
    enabled: secret !== undefined,
    disabledExplicitly: enabled === false,
    secret: secret ?? null,
    tokenTtlSeconds: ttl === undefined ? DEFAULT_TOKEN_TTL_SECONDS : parseDuration(ttl, 'auth.token_ttl'),
    refreshTtlSeconds:
      refreshTtl === undefined ? DEFAULT_REFRESH_TTL_SECONDS : parseDuration(refreshTtl, 'auth.refresh_ttl'),
  };
}

/** Most `-workers`: far more processes than cores only multiply database connections. */
export const MAX_WORKERS = 64;

function parseWorkers(value: string | number): number {
  const n = parsePositiveInteger(value, 'workers', 'processes');
  if (n > MAX_WORKERS) throw configError(`workers '${n}' is more than ${MAX_WORKERS}`);
  return n;
}

/** `-db.pooler` and `-db.listen_url`, for PostgreSQL only. */
function poolerSettings(
  flags: GlobalArgs,
  env: Env,
  file: FileConfig,
  kind: string,
): Pick<Config['db'], 'pooler' | 'listenUrl'> {
  const pooler = pick(flags['db.pooler'], env[ENV.pooler], file.db?.pooler);
  const listenUrl = pick(flags['db.listen_url'], env[ENV.listenUrl], file.db?.listen_url);
  if (pooler !== undefined && pooler !== 'transaction' && pooler !== 'none') {
    throw configError(`db.pooler '${pooler}' is not transaction or none`);
  }
  if (kind !== 'postgres' && (pooler === 'transaction' || listenUrl !== undefined)) {
    throw configError(
      `db.pooler and db.listen_url are for PostgreSQL; the ${kind} database is always reached directly`,
    );
  }
  if (listenUrl !== undefined && parseDbUrl(listenUrl).kind !== 'postgres') {
    throw configError('db.listen_url must be a postgres:// URL');
  }
  return {
    ...(pooler === 'transaction' ? { pooler } : {}),
    ...(listenUrl === undefined ? {} : { listenUrl: pgDriverUrl(listenUrl) }),
  };
}

export function loadConfig(sources: ConfigSources): Config {
  const { flags, env } = sources;
  const configPath = pick(flags.config, env[ENV.config]);
  const file: FileConfig =
    sources.settings ?? (configPath === undefined ? {} : readConfigFile(configPath, sources.readFile));

  const url = pick(flags['db.url'], env[ENV.dbUrl], file.db?.url) ?? DEFAULT_DB_URL;
  const kind = parseDbUrl(url).kind;
  const rlsSetting = pick<string | boolean>(flags['db.rls'], env[ENV.rls], file.db?.rls);
  const rls = rlsSetting === undefined ? kind === 'postgres' : parseSwitch(rlsSetting, 'db.rls');
  if (rls && kind !== 'postgres') {
    throw configError(
      `db.rls on needs PostgreSQL; the ${kind} database is always served with compiled predicates (-db.rls off)`,
    );
  }
  const trustProxy = pick<string | boolean>(
    flags['http.trust_proxy'],
    env[ENV.trustProxy],
    file.http?.trust_proxy,
  );
  const consoleSetting = pick<string | boolean>(flags['http.console'], env[ENV.console], file.http?.console);
  const statementTimeout = pick<string | number>(
    flags['db.statement_timeout'],
    env[ENV.statementTimeout],
    file.db?.statement_timeout,
  );
  const maxRows = pick<string | number>(flags['http.max_rows'], env[ENV.maxRows], file.http?.max_rows);
  const maxWaiting = pick<string | number>(
    flags['db.max_waiting'],
    env[ENV.maxWaiting],
    file.db?.max_waiting,
  );
  const workers = pick<string | number>(flags.workers, env[ENV.workers], file.workers);
  return {
    addr: parseListenAddress(pick(flags.addr, env[ENV.addr], file.addr) ?? DEFAULT_ADDR),
    workers: workers === undefined ? 1 : parseWorkers(workers),
    db: {
      url: kind === 'postgres' ? pgDriverUrl(url) : url,
      rls,
      statementTimeoutMs:
        statementTimeout === undefined
          ? DEFAULT_STATEMENT_TIMEOUT_MS
          : parseTimeout(statementTimeout, 'db.statement_timeout'),
      ...poolerSettings(flags, env, file, kind),
      ...(maxWaiting === undefined
        ? {}
        : { maxWaiting: parsePositiveInteger(maxWaiting, 'db.max_waiting', 'requests') }),
    },
    auth: authSettings(flags, env, file, configPath ?? ''),
    cors: { enabled: file.cors?.enabled ?? false, origins: file.cors?.origins ?? [] },
    http: {
      trustProxy: parseSwitch(trustProxy ?? false, 'http.trust_proxy'),
      maxRows:
        maxRows === undefined ? DEFAULT_MAX_ROWS : parsePositiveInteger(maxRows, 'http.max_rows', 'rows'),
      ...(consoleSetting === undefined ? {} : { console: parseSwitch(consoleSetting, 'http.console') }),
    },
  };
}
