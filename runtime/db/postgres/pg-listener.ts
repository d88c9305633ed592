// A dedicated PostgreSQL connection that LISTENs on one channel and reconnects by itself;
// `onChange` fires for every notification and after every (re)connect, since notifications
// sent while the connection was down are lost (https://www.postgresql.org/docs/current/sql-notify.html).

import type pg from 'pg';

export interface ChangeListenerLogger {
  warn(fields: Readonly<Record<string, unknown>>, message: string): void;
}

export interface PgChangeListenerOptions {
  readonly url: string;
  /** A trusted constant (e.g. `rest_policies`), never request data. */
  readonly channel: string;
  /** A notification's payload, or undefined after a (re)connect: anything may have changed. */
  readonly onChange: (payload?: string) => void;
  readonly logger?: ChangeListenerLogger;
  /** First reconnect delay; doubles up to `maxRetryMs`. */
  readonly retryMs?: number;
  readonly maxRetryMs?: number;
}

export interface ChangeListener {
  /** Resolves once the first LISTEN is in place (or failed; it keeps retrying). */
  readonly ready: Promise<void>;
  close(): Promise<void>;
}

const CHANNEL = /^[a-z_][a-z0-9_]*$/;

export function createPgChangeListener(options: PgChangeListenerOptions): ChangeListener {
  if (!CHANNEL.test(options.channel)) throw new Error(`invalid channel name: ${options.channel}`);
  const retryMs = options.retryMs ?? 250;
  const maxRetryMs = options.maxRetryMs ?? 1000;
  let closed = false;
  let client: pg.Client | undefined;
  let timer: NodeJS.Timeout | undefined;
  let delay = retryMs;

  const scheduleReconnect = (): void => {
    if (closed || timer !== undefined) return;
    timer = setTimeout(() => {
      timer = undefined;
      void connect();
    }, delay);
    timer.unref();
    delay = Math.min(delay * 2, maxRetryMs);
  };

  async function connect(): Promise<void> {
    // The driver is loaded here, not with this module: db/change-source.ts imports this module
    // whatever the database, and a MySQL/MariaDB or SQLite server need not load `pg`.
    const { Client } = (await import('pg')).default;
    if (closed) return;
    const c = new Client({ connectionString: options.url });
    client = c;
    let dropped = false;
    const drop = (error?: Error): void => {
      if (dropped) return;
      dropped = true;
      if (client === c) client = undefined;
      c.removeAllListeners('notification');
      c.end().catch(() => undefined);
      if (!closed) {
        options.logger?.warn(
          { channel: options.channel, err: error?.message },
          'change listener disconnected',
        );
        scheduleReconnect();
      }
    };
    c.on('error', drop);
    c.on('end', () => drop());
    c.on('notification', (n) => {
      if (n.channel === options.channel) options.onChange(n.payload);
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${options.channel}`);
      if (closed) {
        await c.end();
        return;
      }
      delay = retryMs;
      options.onChange();
    } catch (e) {
      drop(e instanceof Error ? e : undefined);
    }
  }

  const ready = connect();
  return {
    ready,
    async close() {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
      const c = client;
      client = undefined;
      if (c !== undefined) {
        c.removeAllListeners();
        c.on('error', () => undefined);
        await c.end().catch(() => undefined);
      }
    },
  };
}
