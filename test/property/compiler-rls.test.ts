// Property test of the generated RLS DDL on a real PostgreSQL: random policy sets are applied
// with compileRls, then every action runs under a non-owner role with the session settings of a
// random user, on one reused connection (as a pool would); the rows PostgreSQL lets through —
// read, read_mine, update, delete, insert, with RETURNING — are exactly those `check` accepts.

import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compilePolicySet } from '../../compiler/policy-set.js';
import { compileRls } from '../../compiler/rls/compile-rls.js';
import { sessionSettingValues } from '../../compiler/rls/session-settings.js';
import { postgresDialect } from '../../compiler/sql/postgres-dialect.js';
import type { Action, AuthUser, PolicyRow } from '../../compiler/types.js';
import { printPolicy } from '../../grammar/print-policy.js';
import { createTestDatabase, pgTextCollations, type TestDatabase } from '../support/databases.js';
import {
  conditionArbitrary,
  edgeRows,
  rowArbitrary,
  TABLE,
  TABLE_COLUMNS,
  userArbitrary,
  type TestRow,
} from '../unit/compiler/support/typed-policies.js';

// Linguistic text collations where the server has ICU (see pgTextCollations).
const COLLATE = pgTextCollations();
const ROWS = edgeRows(40);
const NUM_RUNS = Number(process.env['FC_NUM_RUNS'] ?? 60);
const SEED = process.env['FC_SEED'] === undefined ? undefined : Number(process.env['FC_SEED']);
const COLUMNS = ['id', 'user_id', 'org', 'score', 'flag', 'name'] as const;
const suffix = randomBytes(4).toString('hex');
const REST_ROLE = `rest_rls_${suffix}`;
const OTHER_ROLE = `other_rls_${suffix}`;

const policyRowsArbitrary: fc.Arbitrary<PolicyRow[]> = fc
  .array(
    fc.record({
      table_name: fc.constantFrom(TABLE, 'all'),
      action: fc.constantFrom('all', 'read', 'read_mine', 'create', 'update', 'delete'),
      expr: conditionArbitrary.filter((e) => [...printPolicy(e)].length <= 128),
    }),
    { minLength: 1, maxLength: 3 },
  )
  .map((rs) =>
    rs.map((r, i) => ({
      id: i + 1,
      table_name: r.table_name,
      action: r.action,
      expression: printPolicy(r.expr),
      description: '',
      columns: null,
    })),
  );

type Outcome = { readonly ids: readonly number[] } | { readonly error: string };

describe('generated RLS on PostgreSQL', () => {
  let db: TestDatabase | undefined;
  let client: pg.Client | undefined;

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
    await client.query(
      `CREATE TABLE ${TABLE} (id integer PRIMARY KEY, user_id integer, org text${COLLATE.org}, score numeric(12,2), flag boolean, name varchar(64)${COLLATE.name})`,
    );
    for (const row of ROWS) {
      await client.query(
        `INSERT INTO ${TABLE} VALUES ($1, $2, $3, $4, $5, $6)`,
        COLUMNS.map((c) => row[c]),
      );
    }
    // Roles are cluster-wide: random names, dropped afterwards.
    for (const role of [REST_ROLE, OTHER_ROLE]) {
      await client.query(`CREATE ROLE ${role} NOLOGIN`);
      await client.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ${TABLE} TO ${role}`);
    }
  });
  afterAll(async () => {
    if (client !== undefined) {
      await client.query(`DROP TABLE IF EXISTS ${TABLE}`);
      for (const role of [REST_ROLE, OTHER_ROLE]) await client.query(`DROP ROLE IF EXISTS ${role}`);
      await client.end();
    }
    await db?.drop();
  });

  /** One request: its own transaction, the role, the settings, the statement; always rolled back. */
  async function request(
    role: string,
    user: AuthUser | undefined,
    action: Action,
    text: string,
    values: unknown[] = [],
  ): Promise<Outcome> {
    const c = client as pg.Client;
    await c.query('BEGIN');
    try {
      await c.query(`SET LOCAL ROLE ${role}`);
      if (user !== undefined) {
        const settings = sessionSettingValues(user, action);
        await c.query(
          `SELECT ${settings.map((_, i) => `set_config($${2 * i + 1}, $${2 * i + 2}, true)`).join(', ')}`,
          settings.flatMap((s) => [s.name, s.value]),
        );
      }
      const result = await c.query(text, values);
      return { ids: result.rows.map((r: Record<string, unknown>) => Number(r['id'])).sort((a, b) => a - b) };
    } catch (e) {
      return { error: (e as { code?: string }).code ?? String(e) };
    } finally {
      await c.query('ROLLBACK');
    }
  }

  async function apply(rows: readonly PolicyRow[]): Promise<void> {
    const c = client as pg.Client;
    await c.query('BEGIN');
    for (const statement of compileRls({
      table: TABLE,
      columns: TABLE_COLUMNS,
      policies: rows,
      roles: [REST_ROLE],
    })) {
      await c.query(statement);
    }
    await c.query('COMMIT');
  }

  const newValues = (r: TestRow): unknown[] => COLUMNS.slice(1).map((c) => r[c]);
  const INSERT = `INSERT INTO ${TABLE} (${COLUMNS.join(', ')}) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`;
  const UPDATE = `UPDATE ${TABLE} SET ${COLUMNS.slice(1)
    .map((c, i) => `${c} = $${i + 1}`)
    .join(', ')} RETURNING id`;

  it(`every action under the rest role returns what check accepts, other roles see every row (${NUM_RUNS} runs; postgres)`, async () => {
    await fc.assert(
      fc.asyncProperty(policyRowsArbitrary, userArbitrary, rowArbitrary(1000), async (rows, user, fresh) => {
        await apply(rows);
        const set = compilePolicySet(rows, postgresDialect);
        const allowed = (action: Action): number[] =>
          ROWS.filter((r) => set.policyFor(TABLE, action, TABLE_COLUMNS).check(r, user)).map((r) => r.id);

        for (const action of ['read', 'read_mine'] as const) {
          expect(await request(REST_ROLE, user, action, `SELECT id FROM ${TABLE}`), action).toEqual({
            ids: allowed(action),
          });
        }
        expect(
          await request(REST_ROLE, user, 'delete', `DELETE FROM ${TABLE} RETURNING id`),
          'delete',
        ).toEqual({ ids: allowed('delete') });

        const update = set.policyFor(TABLE, 'update', TABLE_COLUMNS);
        const visible = allowed('update');
        // Every visible row becomes `fresh` but keeps its id; one that then fails WITH CHECK fails the statement.
        const changedOk = visible.every((id) => update.check({ ...fresh, id }, user));
        expect(await request(REST_ROLE, user, 'update', UPDATE, newValues(fresh)), 'update').toEqual(
          changedOk ? { ids: visible } : { error: '42501' },
        );

        const createOk = set.policyFor(TABLE, 'create', TABLE_COLUMNS).check(fresh, user);
        expect(
          await request(
            REST_ROLE,
            user,
            'create',
            INSERT,
            COLUMNS.map((c) => fresh[c]),
          ),
          'create',
        ).toEqual(createOk ? { ids: [fresh.id] } : { error: '42501' });

        expect(await request(OTHER_ROLE, undefined, 'read', `SELECT id FROM ${TABLE}`), 'other role').toEqual(
          { ids: ROWS.map((r) => r.id) },
        );
      }),
      { numRuns: NUM_RUNS, ...(SEED === undefined ? {} : { seed: SEED }) },
    );
  }, 300_000);

  it(`the rest role without settings (a pooled connection after a request) sees nothing and errs nowhere (postgres)`, async () => {
    await apply([
      {
        id: 1,
        table_name: 'all',
        action: 'all',
        expression: 'user_id = auth_user.id or auth_user.claims.ok',
        description: '',
        columns: null,
      },
    ]);
    const admin: AuthUser = {
      id: 1,
      username: 'root',
      is_admin: true,
      is_authenticated: true,
      claims: { ok: true },
    };
    expect(await request(REST_ROLE, admin, 'read', `SELECT id FROM ${TABLE}`)).toEqual({
      ids: ROWS.map((r) => r.id),
    });
    expect(await request(REST_ROLE, undefined, 'read', `SELECT id FROM ${TABLE}`)).toEqual({ ids: [] });
  });
});
