// The hand-written baseline of the bench: express 5 + pg Pool + jose HS256 verify, one route
// returning the caller's first 20 rows. It does the naive per-request work a user would write:
// every token is verified, every query is an unnamed (re-parsed) statement.
// Run: node dist-bench/bench/baseline-server.js --db-url <postgres url> --port <n>  (secret in BENCH_SECRET)

import type { Server } from 'node:http';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import express from 'express';
import { jwtVerify } from 'jose';
import pg from 'pg';

const ITEMS_SQL =
  'SELECT id, user_id, title, amount, done, created_at FROM items WHERE user_id = $1 ORDER BY id LIMIT 20';

const unauthorized = {
  error: { code: 'invalid_token', message: 'a valid bearer token is required' },
} as const;

async function userIdOf(header: string | undefined, key: Uint8Array): Promise<number | undefined> {
  if (header === undefined || !header.startsWith('Bearer ')) return undefined;
  try {
    const { payload } = await jwtVerify(header.slice('Bearer '.length), key, { algorithms: ['HS256'] });
    const id = Number(payload['user_id']);
    return Number.isSafeInteger(id) ? id : undefined;
  } catch {
    return undefined;
  }
}

export function createBaselineApp(pool: pg.Pool, secret: string): express.Express {
  const key = new TextEncoder().encode(secret);
  const app = express();
  app.disable('x-powered-by');
  app.get('/', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/items', async (req, res) => {
    const userId = await userIdOf(req.headers.authorization, key);
    if (userId === undefined) {
      res.status(401).set('WWW-Authenticate', 'Bearer').json(unauthorized);
      return;
    }
    const { rows } = await pool.query(ITEMS_SQL, [userId]);
    res.json(rows);
  });
  app.use((err: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    console.error(err instanceof Error ? err.message : String(err));
    res.status(500).json({ error: { code: 'internal', message: 'internal error' } });
  });
  return app;
}

export interface BaselineServer {
  readonly port: number;
  close(): Promise<void>;
}

export async function startBaselineServer(options: {
  readonly dbUrl: string;
  readonly secret: string;
  readonly port: number;
  readonly poolSize?: number;
}): Promise<BaselineServer> {
  // pg's default pool size (10), as a hand-written service would get without tuning.
  const pool = new pg.Pool({ connectionString: options.dbUrl, max: options.poolSize ?? 10 });
  const server: Server = createBaselineApp(pool, options.secret).listen(options.port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  return {
    port,
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await pool.end();
    },
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { 'db-url': { type: 'string' }, port: { type: 'string', default: '0' } },
  });
  const dbUrl = values['db-url'];
  const secret = process.env['BENCH_SECRET'];
  if (dbUrl === undefined || secret === undefined) {
    console.error(
      'usage: BENCH_SECRET=<secret> node baseline-server.js --db-url <postgres url> [--port <n>]',
    );
    process.exit(1);
  }
  const server = await startBaselineServer({ dbUrl, secret, port: Number(values.port) });
  console.log(`baseline listening on http://127.0.0.1:${server.port}`);
  process.once('SIGTERM', () => {
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e: unknown) => {
    console.error(`baseline failed: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(3);
  });
}
