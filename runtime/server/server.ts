// The composition root of the HTTP server: adapter + schema cache + app, listening on
// `config.addr`; close() drains the server (every accepted request is answered) and closes the pool.

import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RestError } from '../../errors/rest-error.js';
import { createApp, systemClock, type Clock } from './app.js';
import type { PolicyTestRunner } from '../console/console-api.js';
import { DEFAULT_STATEMENT_TIMEOUT_MS, type Config, type ListenAddress } from '../config.js';
import type { DbAdapter } from '../db/adapter.js';
import { createAdapter } from '../db/create-adapter.js';
import { createDrainingServer, type DrainingServer } from '../http/draining-server.js';
import { expressShaped } from '../http/express-shaped.js';
import type { Logger } from '../logger.js';
import type { PasswordHasher } from '../auth/passwords.js';
import type { SessionClock } from '../auth/sessions.js';
import { wireAuth, type AuthWiring } from './wire-auth.js';
import { createSchemaCache } from '../db/schema-cache.js';

/** Requests get this long after close() before their connections are cut. */
export const SHUTDOWN_GRACE_MS = 8000;
/** A connection without a request in progress is kept this long, once no more are accepted, for one to arrive. */
const IDLE_GRACE_MS = 1000;
/** Then the pool gets this long: a statement still running is abandoned, so the process exits within 10 s. */
const POOL_CLOSE_MS = 1500;

export interface ServerHandle {
  /** The bound address, `host:port` (IPv6 hosts in brackets). */
  readonly address: string;
  /** A URL that reaches the server, e.g. `http://127.0.0.1:3000`. */
  readonly url: string;
  readonly adapter: DbAdapter;
  /** Idempotent graceful shutdown. */
  close(): Promise<void>;
}

export interface StartOptions {
  readonly logger: Logger;
  readonly clock?: Clock;
  /** Default SHUTDOWN_GRACE_MS. */
  readonly shutdownGraceMs?: number;
  /** The sessions' wall clock (wire-auth.ts); default `Date.now`. */
  readonly sessionClock?: SessionClock;
  /** The password hasher (wire-auth.ts); default createPasswordHasher's, bcrypt cost 10. */
  readonly hasher?: PasswordHasher;
  /**
   * Least time between two checks of the schema version (db/schema-cache.ts); default 1 s. A
   * statement that meets a changed schema makes the next request check at once, whatever this is.
   */
  readonly schemaCheckIntervalMs?: number;
  /** The console's policy test runner (runtime/policy-test, given from above); absent: none. */
  readonly policyTests?: PolicyTestRunner;
}

function listen(server: Server, addr: ListenAddress): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    const onError = (e: NodeJS.ErrnoException): void => {
      const where = `${addr.host ?? ''}:${addr.port}`;
      const why =
        e.code === 'EADDRINUSE'
          ? `address ${where} is already in use`
          : e.code === 'EACCES'
            ? `no permission to listen on ${where}`
            : `cannot listen on ${where} (${e.code ?? e.message})`;
      reject(new RestError('listen_failed', why, { cause: e }));
    };
    server.once('error', onError);
    server.listen({ port: addr.port, ...(addr.host === undefined ? {} : { host: addr.host }) }, () => {
      server.off('error', onError);
      resolve(server.address() as AddressInfo);
    });
  });
}

/** True when `work` settles within `ms` (rejecting if it does); false, leaving it running, if not. */
async function settlesWithin(work: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(resolve, ms, false)));
  try {
    return await Promise.race([work.then(() => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

function describe(info: AddressInfo): { address: string; url: string } {
  const bracket = (h: string): string => (h.includes(':') ? `[${h}]` : h);
  const unspecified = info.address === '::' || info.address === '0.0.0.0';
  return {
    address: `${bracket(info.address)}:${info.port}`,
    url: `http://${unspecified ? 'localhost' : bracket(info.address)}:${info.port}`,
  };
}

export async function startServer(config: Config, options: StartOptions): Promise<ServerHandle> {
  const { logger } = options;
  const adapter = await createAdapter(config.db.url, {
    logger,
    statementTimeoutMs: config.db.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS,
    ...(config.db.pooler === undefined ? {} : { pooler: config.db.pooler }),
    ...(config.db.maxWaiting === undefined ? {} : { maxWaiting: config.db.maxWaiting }),
  });
  const schema = createSchemaCache(
    adapter,
    options.schemaCheckIntervalMs === undefined ? {} : { checkIntervalMs: options.schemaCheckIntervalMs },
  );
  let http: DrainingServer;
  let info: AddressInfo;
  let auth: AuthWiring | undefined;
  try {
    await schema.get();
    auth = await wireAuth({
      config,
      adapter,
      schema,
      logger,
      ...(options.sessionClock === undefined ? {} : { sessionClock: options.sessionClock }),
      ...(options.hasher === undefined ? {} : { hasher: options.hasher }),
    });
    const app = createApp({
      adapter,
      schema,
      logger,
      config,
      clock: options.clock ?? systemClock,
      authenticate: auth.authenticate,
      authorizer: auth.authorizer,
      runner: auth.runner,
      ...(auth.authRoutes === undefined ? {} : { authRoutes: auth.authRoutes }),
      ...(auth.policies === undefined ? {} : { policies: auth.policies }),
      ...(options.policyTests === undefined ? {} : { policyTests: options.policyTests }),
    });
    http = createDrainingServer(app, expressShaped(app));
    info = await listen(http.server, config.addr);
  } catch (e) {
    await auth?.close();
    await adapter.close();
    throw e;
  }
  const wired = auth;
  const { address, url } = describe(info);
  const onOff = (b: boolean): string => (b ? 'on' : 'off');
  // Without auth every table is open to anyone: the start line says so, at warning level.
  const authText = config.auth.enabled ? 'on' : 'off: every table is public';
  logger[config.auth.enabled ? 'info' : 'warn'](
    { address, url, database: adapter.kind, auth: onOff(config.auth.enabled), rls: onOff(config.db.rls) },
    `listening on ${url} (database ${adapter.kind}${config.db.pooler === undefined ? '' : ' through a transaction pooler'}, auth ${authText}, rls ${onOff(config.db.rls)})`,
  );

  const graceMs = options.shutdownGraceMs ?? SHUTDOWN_GRACE_MS;
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      await http.drain({
        graceMs,
        idleMs: Math.min(IDLE_GRACE_MS, graceMs),
        stoppedAccepting: () =>
          logger.info({ graceMs }, 'stopped accepting connections; answering the requests of those accepted'),
      });
      const connections = (async () => {
        await wired.close();
        await adapter.close();
      })();
      if (!(await settlesWithin(connections, POOL_CLOSE_MS))) {
        logger.warn(
          { waitedMs: POOL_CLOSE_MS },
          'the database connections did not close in time (a statement is still running); not waiting for them',
        );
      }
    })());
  return { address, url, adapter, close };
}
