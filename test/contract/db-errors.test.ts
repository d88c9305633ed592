// Every row of each driver's error mapping (runtime/db/<kind>/*-errors.ts) triggered for real on
// its database, connection failures and recovery, and createAdapter's answers to bad URLs and
// unreachable databases.

import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DialectName } from '../../compiler/types.js';
import type { ErrorCategory } from '../../errors/error-codes.js';
import { RestError } from '../../errors/rest-error.js';
import { createAdapter } from '../../runtime/db/create-adapter.js';
import { parseDbUrl } from '../../runtime/db/parse-db-url.js';
import { ALL_KINDS, isAvailable, skipReason, withMysql, withPg } from '../support/databases.js';
import { serverIt } from '../support/server-only.js';
import { closeFixture, openFixture, q, rejection, type AdapterFixture } from './db-support.js';

const DDL: readonly string[] = [
  `CREATE TABLE parent (id integer PRIMARY KEY, code varchar(3) UNIQUE, n integer NOT NULL,
     pos integer CHECK (pos > 0), d date)`,
  `CREATE TABLE child (id integer PRIMARY KEY, parent_id integer, FOREIGN KEY (parent_id) REFERENCES parent (id))`,
];

interface Statement {
  readonly sql: string;
  readonly values: readonly unknown[];
}

interface ErrorCase {
  readonly name: string;
  readonly category: ErrorCategory;
  readonly code: string;
  readonly details?: Readonly<Record<string, unknown>>;
  /** The failing statement per database; absent where the database has no such error. */
  readonly statement: Partial<Record<DialectName, Statement>>;
}

const all = (sql: string, ...values: unknown[]): Record<DialectName, Statement> => ({
  postgres: { sql, values },
  mysql: { sql, values },
  sqlite: { sql, values },
});

const ERROR_CASES: readonly ErrorCase[] = [
  {
    name: 'a duplicate primary key',
    category: 'conflict',
    code: 'unique_violation',
    statement: all('INSERT INTO parent (id, n) VALUES (?, ?)', 1, 1),
  },
  {
    name: 'a duplicate unique value',
    category: 'conflict',
    code: 'unique_violation',
    statement: all('INSERT INTO parent (id, code, n) VALUES (?, ?, ?)', 50, 'abc', 1),
  },
  {
    name: 'an explicit NULL in a NOT NULL column',
    category: 'invalid_input',
    code: 'not_null_violation',
    details: { column: 'n' },
    statement: all('INSERT INTO parent (id, n) VALUES (?, ?)', 51, null),
  },
  {
    name: 'a NOT NULL column left out',
    category: 'invalid_input',
    code: 'not_null_violation',
    details: { column: 'n' },
    statement: all('INSERT INTO parent (id) VALUES (?)', 52),
  },
  {
    name: 'text where an integer is expected',
    category: 'invalid_input',
    code: 'invalid_value',
    statement: {
      postgres: { sql: 'INSERT INTO parent (id, n) VALUES (?, ?)', values: [53, 'abc'] },
      mysql: { sql: 'INSERT INTO parent (id, n) VALUES (?, ?)', values: [53, 'abc'] },
      // SQLite stores any value in an ordinary column; only the rowid must be an integer.
      sqlite: { sql: 'INSERT INTO parent (id, n) VALUES (?, ?)', values: ['abc', 1] },
    },
  },
  {
    name: 'an integer out of range',
    category: 'invalid_input',
    code: 'invalid_value',
    statement: {
      postgres: { sql: 'INSERT INTO parent (id, n) VALUES (?, ?)', values: [54, 99999999999] },
      mysql: { sql: 'INSERT INTO parent (id, n) VALUES (?, ?)', values: [54, 99999999999] },
      sqlite: { sql: 'INSERT INTO strict_t (id, n) VALUES (?, ?)', values: [54, 'abc'] },
    },
  },
  {
    name: 'a string too long for its column',
    category: 'invalid_input',
    code: 'invalid_value',
    statement: {
      postgres: { sql: 'INSERT INTO parent (id, code, n) VALUES (?, ?, ?)', values: [55, 'abcd', 1] },
      mysql: { sql: 'INSERT INTO parent (id, code, n) VALUES (?, ?, ?)', values: [55, 'abcd', 1] },
    },
  },
  {
    name: 'an impossible date',
    category: 'invalid_input',
    code: 'invalid_value',
    statement: {
      postgres: { sql: 'INSERT INTO parent (id, n, d) VALUES (?, ?, ?)', values: [56, 1, '2024-02-30'] },
      mysql: { sql: 'INSERT INTO parent (id, n, d) VALUES (?, ?, ?)', values: [56, 1, '2024-02-30'] },
    },
  },
  {
    name: 'a reference to a missing row',
    category: 'conflict',
    code: 'foreign_key_violation',
    statement: all('INSERT INTO child (id, parent_id) VALUES (?, ?)', 60, 999),
  },
  {
    name: 'deleting a row other rows refer to',
    category: 'conflict',
    code: 'foreign_key_violation',
    statement: all('DELETE FROM parent WHERE id = ?', 1),
  },
  {
    name: 'a CHECK constraint',
    category: 'invalid_input',
    code: 'check_violation',
    statement: all('INSERT INTO parent (id, n, pos) VALUES (?, ?, ?)', 61, 1, -1),
  },
  {
    name: 'a syntax error',
    category: 'internal',
    code: 'internal',
    statement: all('SELEC id FROM parent WHERE id = ?', 1),
  },
];

describe.each(ALL_KINDS)('%s errors', (kind) => {
  const available = isAvailable(kind);
  let f: AdapterFixture;

  beforeAll(async () => {
    if (!available) return;
    f = await openFixture(kind);
    for (const ddl of DDL) await f.adapter.exec(ddl);
    if (kind === 'sqlite')
      await f.adapter.exec('CREATE TABLE strict_t (id integer PRIMARY KEY, n integer) STRICT');
    await q(f.adapter, f.adapter.dialect, 'INSERT INTO parent (id, code, n) VALUES (?, ?, ?)', [1, 'abc', 1]);
    await q(f.adapter, f.adapter.dialect, 'INSERT INTO child (id, parent_id) VALUES (?, ?)', [1, 1]);
  });
  afterAll(() => (available ? closeFixture(f) : undefined));

  const cases = ERROR_CASES.flatMap((c) => {
    const statement = c.statement[kind];
    return statement === undefined ? [] : [{ ...c, statement }];
  });

  describe.skipIf(!available)(skipReason(kind) ?? 'driver errors', () => {
    it.each(cases)('maps $name to $code', async ({ statement, category, code, details }) => {
      const e = await rejection(q(f.adapter, f.adapter.dialect, statement.sql, statement.values));
      expect(e).toBeInstanceOf(RestError);
      const error = e as RestError;
      expect({ category: error.category, code: error.code }).toStrictEqual({ category, code });
      expect(error.details).toStrictEqual(details);
      expect(error.cause).toBeInstanceOf(Error);
      // The public message names no SQL and repeats nothing of the driver's message.
      expect(error.message).not.toMatch(/INSERT|SELEC|DELETE|parent|child|strict_t/i);
      expect(error.message).not.toContain((error.cause as Error).message);
      expect(JSON.stringify(error.toBody())).not.toMatch(/INSERT|SELEC|DELETE/i);
    });

    it('keeps working after every one of those errors', async () => {
      const { rows } = await q(f.adapter, f.adapter.dialect, 'SELECT count(*) AS n FROM parent');
      expect(rows).toStrictEqual([{ n: 1 }]);
    });
  });

  // Cases that exist on some databases only are not defined (rather than skipped) on the others.
  const only = (kinds: readonly DialectName[]): typeof describe | undefined =>
    kinds.includes(kind) ? describe : undefined;

  // Only PostgreSQL has roles to switch to inside a transaction (SQLSTATE 42501).
  only(['postgres'])?.skipIf(!available)(skipReason(kind) ?? 'PostgreSQL privileges', () => {
    it('maps insufficient privilege (42501) to 403 forbidden', async () => {
      const e = await rejection(
        f.adapter.transaction(async (tx) => {
          // pg_monitor is a built-in role without rights on this table; SET LOCAL ends with the transaction.
          await q(tx, f.adapter.dialect, 'SET LOCAL ROLE pg_monitor');
          await q(tx, f.adapter.dialect, 'INSERT INTO parent (id, n) VALUES (?, ?)', [70, 1]);
        }),
      );
      expect([(e as RestError).category, (e as RestError).code]).toStrictEqual(['forbidden', 'forbidden']);
      const { rows } = await q(f.adapter, f.adapter.dialect, 'SELECT current_user AS u');
      expect(rows[0]?.['u']).not.toBe('pg_monitor');
    });
  });

  only(['postgres', 'mysql'])?.skipIf(!available)(skipReason(kind) ?? 'lost connections', () => {
    const backendId: Readonly<Record<Exclude<DialectName, 'sqlite'>, string>> = {
      postgres: 'SELECT pg_backend_pid() AS id',
      mysql: 'SELECT CONNECTION_ID() AS id',
    };
    const kill = (id: number): string =>
      kind === 'postgres' ? `SELECT pg_terminate_backend(${id})` : `KILL CONNECTION ${id}`;

    it('maps a connection killed inside a transaction to 503 and the pool recovers by itself', async () => {
      const e = await rejection(
        f.adapter.transaction(async (tx) => {
          const id = Number(
            (await q(tx, f.adapter.dialect, backendId[kind as 'postgres' | 'mysql'])).rows[0]?.['id'],
          );
          await f.adapter.exec(kill(id));
          await q(tx, f.adapter.dialect, 'SELECT 1 AS one');
        }),
      );
      expect([(e as RestError).category, (e as RestError).code]).toStrictEqual([
        'unavailable',
        'database_unavailable',
      ]);
      for (let i = 0; i < 20; i++) {
        const { rows } = await q(f.adapter, f.adapter.dialect, 'SELECT count(*) AS n FROM parent');
        expect(rows).toStrictEqual([{ n: 1 }]);
      }
    });

    it('survives idle pooled connections being killed', async () => {
      const ids = await Promise.all(
        [0, 1].map(() =>
          f.adapter.transaction(async (tx) =>
            Number((await q(tx, f.adapter.dialect, backendId[kind as 'postgres' | 'mysql'])).rows[0]?.['id']),
          ),
        ),
      );
      // Killed from a connection of its own: a pooled one could be among the victims.
      if (kind === 'postgres') await withPg(f.db.url, (c) => c.query(ids.map(kill).join('; ')));
      else for (const id of ids) await withMysql(f.db.url, (c) => c.query(kill(id)));
      await new Promise((resolve) => setTimeout(resolve, 100));
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, () => q(f.adapter, f.adapter.dialect, 'SELECT 1 AS one')),
      );
      // A killed connection the pool has not noticed yet may fail one query with 503; later ones work.
      for (const r of results) {
        if (r.status === 'rejected') expect((r.reason as RestError).code).toBe('database_unavailable');
      }
      expect((await q(f.adapter, f.adapter.dialect, 'SELECT 1 AS one')).rows).toStrictEqual([{ one: 1 }]);
    });
  });

  only(['sqlite'])?.('SQLite locks', () => {
    it('waits for another connection to commit without blocking the event loop', async () => {
      const other = await createAdapter(f.db.url);
      try {
        let release!: () => void;
        const gate = new Promise<void>((resolve) => (release = resolve));
        const holder = other.transaction(async (tx) => {
          await q(tx, other.dialect, 'INSERT INTO parent (id, n) VALUES (?, ?)', [90, 1]);
          await gate;
        });
        await new Promise((resolve) => setTimeout(resolve, 10));
        const started = Date.now();
        const waiting = q(f.adapter, f.adapter.dialect, 'INSERT INTO parent (id, n) VALUES (?, ?)', [91, 1]);
        // A timer still fires on time while the insert waits for the lock.
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect(Date.now() - started).toBeLessThan(1000);
        release();
        await holder;
        expect((await waiting).rowCount).toBe(1);
        await q(f.adapter, f.adapter.dialect, 'DELETE FROM parent WHERE id IN (?, ?)', [90, 91]);
      } finally {
        await other.close();
      }
    });

    it('maps a lock held past the busy timeout to 503', async () => {
      const other = new Database(parseDbUrlPath(f.db.url));
      try {
        other.exec('BEGIN EXCLUSIVE');
        const e = await rejection(
          q(f.adapter, f.adapter.dialect, 'INSERT INTO parent (id, n) VALUES (?, ?)', [80, 1]),
        );
        expect([(e as RestError).category, (e as RestError).code]).toStrictEqual([
          'unavailable',
          'database_unavailable',
        ]);
      } finally {
        if (other.inTransaction) other.exec('ROLLBACK');
        other.close();
      }
      expect((await q(f.adapter, f.adapter.dialect, 'SELECT count(*) AS n FROM parent')).rows).toStrictEqual([
        { n: 1 },
      ]);
    }, 20_000);
  });

  describe.skipIf(!available)(skipReason(kind) ?? 'closed adapter', () => {
    it('answers 503 after close', async () => {
      const g = await openFixture(kind);
      await g.adapter.close();
      const e = await rejection(q(g.adapter, g.adapter.dialect, 'SELECT 1 AS one'));
      expect((e as RestError).code).toBe('database_unavailable');
      await expect(g.adapter.transaction(async () => 1)).rejects.toMatchObject({
        code: 'database_unavailable',
      });
      await g.adapter.close();
      await g.db.drop();
    });
  });
});

function parseDbUrlPath(url: string): string {
  const parsed = parseDbUrl(url);
  if (parsed.kind !== 'sqlite') throw new Error('not a SQLite URL');
  return parsed.path;
}

describe('createAdapter', () => {
  it.each([
    'ftp://host/db',
    'not a url',
    '',
    'mysql://127.0.0.1:3306',
    'mariadb://127.0.0.1:3306/',
    'sqlite://',
    'sqlite:rest.db',
    'postgres://u:p@host:99999/db',
  ])('rejects %j as a usage error', async (url) => {
    const e = await rejection(createAdapter(url));
    expect(e).toBeInstanceOf(RestError);
    expect([(e as RestError).category, (e as RestError).code]).toStrictEqual(['usage', 'invalid_db_url']);
  });

  it.each([
    ['postgres://alice:s3cr3t@127.0.0.1:1/app', 'PostgreSQL'],
    ['mysql://alice:s3cr3t@127.0.0.1:1/app', 'MySQL/MariaDB'],
  ])('reports %s as unavailable in one sentence without the password', async (url, label) => {
    const e = await rejection(createAdapter(url));
    expect(e).toBeInstanceOf(RestError);
    const error = e as RestError;
    expect([error.category, error.code]).toStrictEqual(['unavailable', 'database_unavailable']);
    expect(error.message).toBe(
      `Cannot connect to the ${label} database at ${url.replace('s3cr3t', '***')}: the connection was refused.`,
    );
  });

  it('reports a SQLite file in a missing directory as unavailable, naming the directory', async () => {
    const e = await rejection(createAdapter('sqlite:///nonexistent-rest-dir/sub/x.db'));
    expect((e as RestError).message).toBe(
      'Cannot connect to the SQLite database at sqlite:///nonexistent-rest-dir/sub/x.db: the directory /nonexistent-rest-dir/sub does not exist (rest creates the file, not its directory).',
    );
    expect((e as RestError).category).toBe('unavailable');
  });

  for (const kind of ['postgres', 'mysql'] as const) {
    serverIt(kind)(`reports a missing ${kind} database by name`, async () => {
      const admin = new URL(
        String(process.env[kind === 'postgres' ? 'REST_TEST_PG_URL' : 'REST_TEST_MYSQL_URL']),
      );
      admin.pathname = '/rest_test_does_not_exist';
      const e = await rejection(createAdapter(admin.toString()));
      expect((e as RestError).category).toBe('unavailable');
      expect((e as RestError).message).toMatch(/: the database does not exist\.$/);
    });
  }
});
