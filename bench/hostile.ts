// The hostile-load lane (SPEC §5 "Hostile load"): on each database path, one rest server on a
// fresh database, and three figures measured from outside, none asserted here:
// - failing requests (a bad value, a unique violation, a policy check refused inside the
//   statement) and the database connections the server opened while answering them
//   (PostgreSQL: pg_stat_database.sessions and the backends' pids; MariaDB: the connection ids of
//   its PROCESSLIST, looked at every few milliseconds);
// - a burst of slow writes (a BEFORE INSERT trigger sleeping SLOW_S seconds) whose clients close 5 ms
//   after sending: how long until none of them runs, and other users' reads in a window holding
//   the burst ÷ the same reads in a quiet window just before;
// - a crowd of slow writes beyond -db.max_waiting: how many were answered 503 `overloaded` with
//   `Retry-After`, and how fast.
// `npm run bench` runs it (bench/run.ts); `npm run bench:hostile` runs it alone (bench/hostile-cli.ts).

import { randomBytes } from 'node:crypto';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { requestRoleName } from '../runtime/rls/request-role.js';
import { sendAndHold } from './abandoned-request.js';
import { restCommand } from './contenders.js';
import { startDriver, type Driver } from './driver-client.js';
import type { LoadRequest } from './driver-protocol.js';
import { withDatabaseName } from './generate-data.js';
import { median, type Measured } from './report-model.js';
import { freePort, oneLine, startServer, type ServerProcess } from './server-process.js';
import { bearer, mintToken, mintTokens, send } from './workloads.js';

export const HOSTILE_TARGETS = ['postgres rls=off', 'postgres rls=on', 'mariadb'] as const;
export type HostileTarget = (typeof HOSTILE_TARGETS)[number];

/** How long a slow write would sleep if nothing cancelled it; the statement timeout is longer. */
export const SLOW_S = 60;
const STATEMENT_TIMEOUT = '120s';
const USERS = 50;
const QUICK_ROWS = 2_000;
/** The slow statements are looked for this often, and gone once none was seen for QUIET_MS. */
const LOOK_MS = 10;
const QUIET_MS = 1_000;
/** Longest the lane waits for the slow statements to go: far less than SLOW_S. */
const GIVE_UP_MS = 30_000;

/** How much of each the lane sends. */
export interface HostileProtocol {
  /** Failing requests sent (over `connections` connections). */
  readonly failing: number;
  /** Slow writes in the abandoned burst. */
  readonly abandoned: number;
  /** -db.max_waiting of the server, and the slow writes of the crowd sent past it. */
  readonly maxWaiting: number;
  readonly crowd: number;
  /** Each read window (quiet, then with the burst), seconds. */
  readonly readSeconds: number;
  readonly connections: number;
}

export interface HostileOptions extends HostileProtocol {
  readonly pgAdminUrl: string;
  /** MariaDB (or MySQL) URL whose user may create databases; undefined leaves MariaDB out. */
  readonly mysqlUrl: string | undefined;
  readonly restCli: string;
  readonly driverScript: string;
  readonly readyTimeoutMs?: number;
  readonly progress?: (line: string) => void;
}

/** The full bench's protocol for this lane. */
export const HOSTILE_FULL = {
  failing: 1_000,
  abandoned: 50,
  maxWaiting: 16,
  crowd: 80,
  readSeconds: 3,
  connections: 16,
} as const;

/** `npm run bench -- --smoke --hostile on`: the same measures, smaller. */
export const HOSTILE_SMOKE = {
  failing: 90,
  abandoned: 10,
  maxWaiting: 4,
  crowd: 30,
  readSeconds: 1,
  connections: 8,
} as const;

export interface HostileFigures {
  readonly failing: {
    /** Answers by status, e.g. { "400": 334, "403": 333, "409": 333 }. */
    readonly answers: Readonly<Record<string, number>>;
    /** Connections the server opened to its database while answering them. */
    readonly newConnections: number;
  };
  readonly abandoned: {
    /** From the clients closing to the last look that still saw one of the slow writes running. */
    readonly clearedAfterMs: number;
    /** Most slow writes seen running at one look. */
    readonly mostRunning: number;
    /** Rows of the slow table after the burst and the crowd: a write that ran to its end leaves one. */
    readonly rowsWritten: number;
    readonly readAloneRps: number;
    readonly readDuringRps: number;
    /** Non-2xx answers and connection errors of the reads in the window holding the burst. */
    readonly readDuringBad: number;
  };
  readonly overloaded: {
    /** 503 `overloaded` answers carrying Retry-After. */
    readonly refused: number;
    readonly refusedP50Ms: number;
    readonly refusedMaxMs: number;
    /** Any other answer that came before the crowd was abandoned, by status. */
    readonly other: Readonly<Record<string, number>>;
  };
}

export interface HostileRow {
  readonly target: HostileTarget;
  readonly outcome: Measured<HostileFigures>;
}

export interface HostileReport extends HostileProtocol {
  readonly rows: readonly HostileRow[];
}

const DDL: Readonly<Record<'postgres' | 'mysql', readonly string[]>> = {
  postgres: [
    'CREATE TABLE quick (id serial PRIMARY KEY, user_id integer, body text)',
    'CREATE INDEX quick_user_id_idx ON quick (user_id)',
    'CREATE TABLE slow (id serial PRIMARY KEY, user_id integer, body text)',
    `CREATE FUNCTION slow_insert() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(${SLOW_S}); RETURN NEW; END $$`,
    'CREATE TRIGGER slow_insert BEFORE INSERT ON slow FOR EACH ROW EXECUTE FUNCTION slow_insert()',
    "CREATE TABLE pubu (id uuid PRIMARY KEY DEFAULT gen_random_uuid(), user_id integer, code text UNIQUE, tier text NOT NULL DEFAULT 'gold')",
    `INSERT INTO quick (user_id, body) SELECT (i % ${USERS}) + 1, 'row ' || i FROM generate_series(1, ${QUICK_ROWS}) AS i`,
    'VACUUM ANALYZE quick',
  ],
  mysql: [
    'CREATE TABLE quick (id int AUTO_INCREMENT PRIMARY KEY, user_id int, body text, INDEX (user_id))',
    'CREATE TABLE slow (id int AUTO_INCREMENT PRIMARY KEY, user_id int, body text)',
    `CREATE TRIGGER slow_insert BEFORE INSERT ON slow FOR EACH ROW DO SLEEP(${SLOW_S})`,
    "CREATE TABLE pubu (id uuid PRIMARY KEY DEFAULT uuid(), user_id int, code varchar(64) UNIQUE, tier varchar(16) NOT NULL DEFAULT 'gold')",
    `INSERT INTO quick (user_id, body) SELECT (seq % ${USERS}) + 1, concat('row ', seq) FROM seq_1_to_${QUICK_ROWS}`,
  ],
};

/** A fresh database of the lane, and what the lane looks at in it. */
interface Database {
  readonly url: string;
  /** The server's connections to the database now (pids or connection ids), the watcher's left out. */
  connectionIds(): Promise<readonly number[]>;
  /** Sessions ever opened on the database (PostgreSQL); undefined where there is no such counter. */
  sessions(): Promise<number | undefined>;
  slowRunning(): Promise<number>;
  slowRows(): Promise<number>;
  drop(): Promise<void>;
}

const databaseName = (): string => `rest_bench_${randomBytes(6).toString('hex')}`;

async function postgresDatabase(adminUrl: string): Promise<Database> {
  const name = databaseName();
  const admin = async (sql: string): Promise<void> => {
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = withDatabaseName(adminUrl, name);
  const watcher = new pg.Client({ connectionString: url, application_name: 'rest-bench-watcher' });
  const drop = async (): Promise<void> => {
    await watcher.end().catch(() => undefined);
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin(`DROP ROLE IF EXISTS ${requestRoleName(name)}`);
  };
  try {
    await watcher.connect();
    for (const sql of DDL.postgres) await watcher.query(sql);
  } catch (e) {
    await drop();
    throw e;
  }
  const count = async (sql: string): Promise<number> =>
    Number((await watcher.query<{ n: string }>(sql)).rows[0]?.n ?? Number.NaN);
  return {
    url,
    connectionIds: async () =>
      (
        await watcher.query<{ pid: number }>(
          'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
        )
      ).rows.map((r) => r.pid),
    sessions: () =>
      count('SELECT sessions::text AS n FROM pg_stat_database WHERE datname = current_database()'),
    slowRunning: () =>
      count(
        "SELECT count(*)::text AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event = 'PgSleep'",
      ),
    slowRows: () => count('SELECT count(*)::text AS n FROM slow'),
    drop,
  };
}

async function mariadbDatabase(adminUrl: string): Promise<Database> {
  const name = databaseName();
  const admin = await mysql.createConnection({ uri: adminUrl, multipleStatements: false });
  const drop = async (): Promise<void> => {
    await admin.query(`DROP DATABASE IF EXISTS ${name}`).catch(() => undefined);
    await admin.end().catch(() => undefined);
  };
  try {
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.query(`USE ${name}`);
    for (const sql of DDL.mysql) await admin.query(sql);
  } catch (e) {
    await drop();
    throw e;
  }
  const count = async (sql: string): Promise<number> => {
    const [rows] = await admin.query<mysql.RowDataPacket[]>(sql);
    return Number(rows[0]?.['n'] ?? Number.NaN);
  };
  return {
    url: withDatabaseName(adminUrl, name),
    connectionIds: async () => {
      const [rows] = await admin.query<mysql.RowDataPacket[]>(
        'SELECT ID AS id FROM information_schema.PROCESSLIST WHERE DB = DATABASE() AND ID <> CONNECTION_ID()',
      );
      return rows.map((r) => Number(r['id']));
    },
    sessions: () => Promise.resolve(undefined),
    slowRunning: () =>
      count(
        "SELECT count(*) AS n FROM information_schema.PROCESSLIST WHERE DB = DATABASE() AND STATE = 'User sleep'",
      ),
    slowRows: () => count('SELECT count(*) AS n FROM slow'),
    drop,
  };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const secret = 'hostile-bench-secret-of-at-least-32-bytes!';
const jsonHeaders = (token: string): Record<string, string> => ({
  ...bearer(token),
  'content-type': 'application/json',
});

/** Looks until no slow write was seen for QUIET_MS; the last time one was, after `since`. */
async function untilSlowGone(
  db: Database,
  since: number,
): Promise<{ clearedAfterMs: number; mostRunning: number }> {
  let lastSeen = since;
  let mostRunning = 0;
  for (;;) {
    const running = await db.slowRunning();
    const now = performance.now();
    mostRunning = Math.max(mostRunning, running);
    if (running > 0) lastSeen = now;
    else if (now - lastSeen >= QUIET_MS) return { clearedAfterMs: lastSeen - since, mostRunning };
    if (now - since > GIVE_UP_MS)
      throw new Error(`${running} slow writes still ran ${GIVE_UP_MS} ms after their clients closed`);
    await sleep(LOOK_MS);
  }
}

const statusCounts = (statuses: readonly number[]): Record<string, number> => {
  const out: Record<string, number> = {};
  for (const s of statuses) out[String(s)] = (out[String(s)] ?? 0) + 1;
  return out;
};

/** One target: its database and server, the three measures, everything dropped after. */
async function measureTarget(
  target: HostileTarget,
  options: HostileOptions,
  driver: Driver,
): Promise<HostileFigures> {
  const kind = target === 'mariadb' ? 'mysql' : 'postgres';
  const adminUrl = kind === 'mysql' ? options.mysqlUrl : options.pgAdminUrl;
  if (adminUrl === undefined) throw new Error('no MariaDB URL');
  const db = kind === 'mysql' ? await mariadbDatabase(adminUrl) : await postgresDatabase(adminUrl);
  let server: ServerProcess | undefined;
  try {
    const command = restCommand(
      { restCli: options.restCli, secret },
      `rest ${target}`,
      kind === 'postgres' ? (target === 'postgres rls=on' ? 'on' : 'off') : undefined,
      ['-db.statement_timeout', STATEMENT_TIMEOUT, '-db.max_waiting', String(options.maxWaiting)],
    )(db.url, await freePort());
    server = await startServer(
      { ...command, env: { REST_LOG_LEVEL: 'error' } },
      options.readyTimeoutMs ?? 30_000,
    );
    const base = server.baseUrl;
    const setup = await send(base, { method: 'POST', path: '/auth/setup', headers: {} });
    if (setup.status !== 201) throw new Error(`POST /auth/setup answered ${setup.status}`);
    const admin = await mintToken(secret, 999_999_999, 3600, { is_admin: true });
    const policies = await send(base, {
      method: 'POST',
      path: '/auth_policies',
      headers: jsonHeaders(admin),
      body: JSON.stringify([
        { table_name: 'pubu', action: 'read', expression: 'auth_user.is_authenticated', description: 'b' },
        // A row sent without a tier gets the column's default, which only the statement knows.
        {
          table_name: 'pubu',
          action: 'create',
          expression: "user_id = auth_user.id and tier <> 'gold'",
          description: 'b',
        },
      ]),
    });
    if (policies.status !== 201)
      throw new Error(
        `POST /auth_policies answered ${policies.status}: ${oneLine(JSON.stringify(policies.body), 200)}`,
      );
    const tokens = await mintTokens(
      secret,
      Array.from({ length: USERS }, (_, i) => i + 1),
    );
    const [attacker, ...others] = tokens;
    if (attacker === undefined) throw new Error('no users');

    // Failing requests. The same kinds once successfully first, so that their connections are open.
    const created = await send(base, {
      method: 'POST',
      path: '/pubu',
      headers: jsonHeaders(attacker.token),
      body: JSON.stringify({ user_id: attacker.userId, code: 'taken', tier: 'basic' }),
    });
    if (created.status !== 201) throw new Error(`POST /pubu answered ${created.status}`);
    const failing: LoadRequest[] = Array.from({ length: options.failing }, (_, i): LoadRequest => {
      switch (i % 3) {
        case 0:
          return { method: 'GET', path: `/pubu/not-a-uuid-${i}`, headers: bearer(attacker.token) };
        case 1:
          return {
            method: 'POST',
            path: '/pubu',
            headers: jsonHeaders(attacker.token),
            body: JSON.stringify({ user_id: attacker.userId, code: 'taken', tier: 'basic' }),
          };
        default:
          return {
            method: 'POST',
            path: '/pubu',
            headers: jsonHeaders(attacker.token),
            body: JSON.stringify({ user_id: attacker.userId, code: `refused-${i}` }),
          };
      }
    });
    const warm = await driver.run([
      {
        label: 'warm',
        baseUrl: base,
        connections: options.connections,
        window: { kind: 'requests', requests: Math.max(options.connections, 48) },
        requests: [
          { method: 'GET', path: '/quick?order=id.asc&page_size=20', headers: bearer(attacker.token) },
        ],
      },
    ]);
    if ((warm[0]?.non2xx ?? 1) > 0)
      throw new Error(`warm-up reads answered ${JSON.stringify(warm[0]?.statusCounts)}`);
    const sessions0 = await db.sessions();
    const seen = new Set(await db.connectionIds());
    const before = new Set(seen);
    let looking = true;
    const looker = (async () => {
      while (looking) {
        for (const id of await db.connectionIds()) seen.add(id);
        await sleep(LOOK_MS);
      }
    })();
    const failed = await driver
      .run([
        {
          label: 'failing',
          baseUrl: base,
          connections: options.connections,
          window: { kind: 'requests', requests: options.failing },
          requests: failing,
        },
      ])
      .finally(() => (looking = false));
    await looker;
    // PostgreSQL reports a backend's session to the statistics within a second.
    if (sessions0 !== undefined) await sleep(1_500);
    for (const id of await db.connectionIds()) seen.add(id);
    const sessions1 = await db.sessions();
    const newIds = [...seen].filter((id) => !before.has(id)).length;
    const newSessions = sessions0 === undefined || sessions1 === undefined ? 0 : sessions1 - sessions0;
    const failingResult = failed[0];
    if (failingResult === undefined) throw new Error('the load driver returned no result');
    options.progress?.(
      `[hostile] ${target}: ${failingResult.responses} failing requests ${JSON.stringify(failingResult.statusCounts)}, ${Math.max(newSessions, newIds)} new connections`,
    );

    // Abandoned slow writes, with the other users' reads beside them.
    const reads: LoadRequest[] = others.map((t) => ({
      method: 'GET',
      path: '/quick?order=id.asc&page_size=20',
      headers: bearer(t.token),
    }));
    const readLoad = {
      label: 'reads',
      baseUrl: base,
      connections: Math.max(1, Math.floor(options.connections / 2)),
      window: { kind: 'seconds', seconds: options.readSeconds } as const,
      requests: reads,
    };
    const [alone] = await driver.run([readLoad]);
    const during = driver.run([readLoad]);
    await sleep(100);
    const sockets = await Promise.all(
      Array.from({ length: options.abandoned }, (_, i) =>
        sendAndHold(base, '/slow', attacker.token, JSON.stringify({ body: `abandoned ${i}` })),
      ),
    );
    await sleep(5);
    for (const socket of sockets) socket.destroy();
    const gone = await untilSlowGone(db, performance.now());
    const [duringResult] = await during;
    if (alone === undefined || duringResult === undefined)
      throw new Error('the load driver returned no result');
    options.progress?.(
      `[hostile] ${target}: ${options.abandoned} abandoned slow writes gone after ${gone.clearedAfterMs.toFixed(0)} ms (at most ${gone.mostRunning} running); reads ${alone.rps.toFixed(0)} req/s quiet, ${duringResult.rps.toFixed(0)} with the burst`,
    );

    // A crowd past -db.max_waiting: the refusals are answered while the admitted writes sleep.
    const answers: { status: number; code: string | undefined; retryAfter: boolean; ms: number }[] = [];
    const aborts = Array.from({ length: options.crowd }, () => new AbortController());
    const pending = aborts.map((abort, i) => {
      const t0 = performance.now();
      return fetch(`${base}/slow`, {
        method: 'POST',
        headers: jsonHeaders(attacker.token),
        body: JSON.stringify({ body: `crowd ${i}` }),
        signal: abort.signal,
      }).then(
        async (r) => {
          const body = (await r.json().catch(() => undefined)) as { error?: { code?: string } } | undefined;
          answers.push({
            status: r.status,
            code: body?.error?.code,
            retryAfter: r.headers.get('retry-after') !== null,
            ms: performance.now() - t0,
          });
        },
        () => undefined,
      );
    });
    // The refusals come at once; the admitted writes would sleep SLOW_S seconds: the crowd is
    // abandoned once answers came and then none for a second (on a busy machine they come late).
    const crowdStart = performance.now();
    for (
      let seen = -1;
      (seen !== answers.length || answers.length === 0) && performance.now() - crowdStart < GIVE_UP_MS;
    ) {
      seen = answers.length;
      await sleep(1_000);
    }
    for (const abort of aborts) abort.abort();
    await Promise.all(pending);
    await untilSlowGone(db, performance.now());
    const refused = answers.filter((a) => a.status === 503 && a.code === 'overloaded' && a.retryAfter);
    const other = answers.filter((a) => !refused.includes(a));
    const failingAnswers: Record<string, number> = {};
    for (const [status, n] of Object.entries(failingResult.statusCounts)) failingAnswers[status] = n;
    if (failingResult.errors > 0) failingAnswers['connection errors'] = failingResult.errors;
    return {
      failing: { answers: failingAnswers, newConnections: Math.max(newSessions, newIds) },
      abandoned: {
        clearedAfterMs: gone.clearedAfterMs,
        mostRunning: gone.mostRunning,
        rowsWritten: await db.slowRows(),
        readAloneRps: alone.rps,
        readDuringRps: duringResult.rps,
        readDuringBad: duringResult.non2xx + duringResult.errors,
      },
      overloaded: {
        refused: refused.length,
        refusedP50Ms: refused.length === 0 ? Number.NaN : median(refused.map((a) => a.ms)),
        refusedMaxMs: refused.length === 0 ? Number.NaN : Math.max(...refused.map((a) => a.ms)),
        other: statusCounts(other.map((a) => a.status)),
      },
    };
  } finally {
    await server?.stop();
    await db.drop();
  }
}

/** Every target in turn; a target that cannot be measured is reported with the reason. */
export async function measureHostile(options: HostileOptions): Promise<HostileReport> {
  const driver = await startDriver(options.driverScript);
  const rows: HostileRow[] = [];
  try {
    for (const target of HOSTILE_TARGETS) {
      if (target === 'mariadb' && options.mysqlUrl === undefined) {
        rows.push({ target, outcome: { ok: false, reason: 'no MariaDB URL (REST_TEST_MYSQL_URL)' } });
        continue;
      }
      try {
        rows.push({ target, outcome: { ok: true, value: await measureTarget(target, options, driver) } });
      } catch (e) {
        const reason = oneLine(e instanceof Error ? e.message : String(e), 300);
        options.progress?.(`[hostile] ${target}: not measured: ${reason}`);
        rows.push({ target, outcome: { ok: false, reason } });
      }
    }
  } finally {
    await driver.close();
  }
  const { failing, abandoned, maxWaiting, crowd, readSeconds, connections } = options;
  return { failing, abandoned, maxWaiting, crowd, readSeconds, connections, rows };
}

/** The lane's figures as table lines (BENCHMARKS.md and `npm run bench:hostile`). */
export function hostileTable(report: HostileReport): readonly string[] {
  const answers = (counts: Readonly<Record<string, number>>): string =>
    Object.entries(counts)
      .map(([status, n]) => `${n}× ${status}`)
      .join(', ') || 'none';
  return [
    `| path | new connections during ${report.failing.toLocaleString('en-US')} failing requests (answers) | ${report.abandoned} abandoned slow writes: gone after ms (most running) | other users' reads with the burst ÷ quiet | beyond -db.max_waiting ${report.maxWaiting}: 503 overloaded + Retry-After of ${report.crowd} (p50 / max ms) |`,
    '|---|---|---|---|---|',
    ...report.rows.map((row) => {
      if (!row.outcome.ok)
        return `| ${row.target} | not measured: ${row.outcome.reason.replace(/\|/g, '\\|')} |  |  |  |`;
      const f = row.outcome.value;
      const a = f.abandoned;
      const ratio = a.readAloneRps > 0 ? `${(a.readDuringRps / a.readAloneRps).toFixed(2)}×` : '–';
      const written = a.rowsWritten === 0 ? '' : `; ${a.rowsWritten} written`;
      const bad = a.readDuringBad === 0 ? '' : `; ${a.readDuringBad} reads not 2xx`;
      const other =
        Object.keys(f.overloaded.other).length === 0 ? '' : `; other answers ${answers(f.overloaded.other)}`;
      return `| ${row.target} | ${f.failing.newConnections} (${answers(f.failing.answers)}) | ${a.clearedAfterMs.toFixed(0)} (${a.mostRunning}${written}) | ${ratio} (${a.readDuringRps.toFixed(0)} vs ${a.readAloneRps.toFixed(0)} req/s${bad}) | ${f.overloaded.refused} (${f.overloaded.refusedP50Ms.toFixed(1)} / ${f.overloaded.refusedMaxMs.toFixed(1)})${other} |`;
    }),
  ];
}
