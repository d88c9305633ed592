// docs/policy-language.md "Checks judge what the database stores": create and update checks decide on the rows
// as the database stored them — after enum and collation folding, numeric rounding, char(n)
// padding, defaults and triggers — on every database and both PostgreSQL paths. A failing row is
// 403 policy_check_failed with nothing written (checked through a raw connection); a passing
// write answers with the stored values. Each case states what each database stores, and why.

import { beforeEach, describe, expect, it } from 'vitest';
import type { DialectName } from '../../../compiler/types.js';
import { expectError } from './matrix.js';
import { forEachAuthDatabase, resetRows, setPolicies, type PolicyContext } from './policy-support.js';

/**
 * `things`: a two-value status (MariaDB: an enum, which folds case and trailing spaces under its
 * _ci collation; PostgreSQL: a domain over varchar with a CHECK, which folds nothing and refuses
 * other spellings; SQLite: plain text), a numeric(6,2) amount, a char(5) code and a boolean with
 * a default. `guarded`: a BEFORE INSERT/UPDATE trigger moves a row whose body is 'hijack' to
 * another owner (SQLite triggers cannot rewrite NEW, so SQLite has none).
 */
const STORED_ROW_DDL: Readonly<Record<DialectName, readonly string[]>> = {
  postgres: [
    "CREATE DOMAIN thing_status AS varchar(10) CHECK (VALUE IN ('draft', 'approved'))",
    "CREATE TABLE things (id serial PRIMARY KEY, user_id integer, status thing_status NOT NULL DEFAULT 'draft', amount numeric(6,2), code char(5), approved boolean NOT NULL DEFAULT true)",
    'CREATE TABLE guarded (id serial PRIMARY KEY, user_id integer, body varchar(100))',
    `CREATE FUNCTION guarded_owner() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN
       IF NEW.body = 'hijack' THEN NEW.user_id := NEW.user_id + 1000; END IF;
       RETURN NEW;
     END $$`,
    'CREATE TRIGGER guarded_owner BEFORE INSERT OR UPDATE ON guarded FOR EACH ROW EXECUTE FUNCTION guarded_owner()',
  ],
  mysql: [
    "CREATE TABLE things (id int AUTO_INCREMENT PRIMARY KEY, user_id int, status enum('draft','approved') NOT NULL DEFAULT 'draft', amount decimal(6,2), code char(5), approved boolean NOT NULL DEFAULT true)",
    'CREATE TABLE guarded (id int AUTO_INCREMENT PRIMARY KEY, user_id int, body varchar(100))',
    "CREATE TRIGGER guarded_owner_insert BEFORE INSERT ON guarded FOR EACH ROW IF NEW.body = 'hijack' THEN SET NEW.user_id = NEW.user_id + 1000; END IF",
    "CREATE TRIGGER guarded_owner_update BEFORE UPDATE ON guarded FOR EACH ROW IF NEW.body = 'hijack' THEN SET NEW.user_id = NEW.user_id + 1000; END IF",
  ],
  sqlite: [
    "CREATE TABLE things (id INTEGER PRIMARY KEY AUTOINCREMENT, user_id INTEGER, status varchar(10) NOT NULL DEFAULT 'draft', amount numeric(6,2), code char(5), approved BOOLEAN NOT NULL DEFAULT 1)",
    'CREATE TABLE guarded (id INTEGER PRIMARY KEY AUTOINCREMENT, user_id INTEGER, body varchar(100))',
  ],
};

const THING_COLUMNS = ['id', 'user_id', 'status', 'amount', 'code', 'approved'] as const;
type Thing = Readonly<Record<(typeof THING_COLUMNS)[number], unknown>>;

/** A row of `things` from a driver or from the API, compared by value: numbers as numbers, booleans as booleans. */
function normaliseThing(row: Readonly<Record<string, unknown>>): Thing {
  const number = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
  return {
    id: number(row['id']),
    user_id: number(row['user_id']),
    status: row['status'],
    amount: number(row['amount']),
    code: row['code'],
    approved: row['approved'] === true || row['approved'] === 1 || row['approved'] === '1',
  };
}

/** `things` straight from the database (not through rest), ordered by id. */
async function storedThings(ctx: PolicyContext): Promise<Thing[]> {
  return (await ctx.sql.rows(`SELECT ${THING_COLUMNS.join(', ')} FROM things ORDER BY id`)).map(
    normaliseThing,
  );
}

async function storedGuarded(ctx: PolicyContext): Promise<Array<Record<string, unknown>>> {
  return (await ctx.sql.rows('SELECT id, user_id, body FROM guarded ORDER BY id')).map((r) => ({
    id: Number(r['id']),
    user_id: Number(r['user_id']),
    body: r['body'],
  }));
}

/** What a write must do on one database. */
type Expectation =
  /** 201 / 200, and the written rows hold these values as stored. */
  | { readonly outcome: 'stored'; readonly values: Readonly<Record<string, unknown>> }
  /** 403 policy_check_failed; nothing written. */
  | { readonly outcome: 'refused' }
  /** The database's own constraint refuses the value before any policy is judged; nothing written. */
  | { readonly outcome: 'rejected'; readonly status: number; readonly code: string };

const stores = (values: Readonly<Record<string, unknown>>): Expectation => ({ outcome: 'stored', values });
const REFUSED: Expectation = { outcome: 'refused' };
/**
 * PostgreSQL checks a domain's CHECK (23514) when it converts the bound value, before the insert
 * or update runs, so before any WITH CHECK: both paths answer 400 check_violation.
 */
const DOMAIN_REJECTS: Expectation = { outcome: 'rejected', status: 400, code: 'check_violation' };

type Write =
  | { readonly method: 'POST'; readonly body: unknown }
  /** `ids`: the rows the update targets (all of them change, or none). */
  | {
      readonly method: 'PATCH';
      readonly path: string;
      readonly patch: Record<string, unknown>;
      readonly ids: readonly number[];
    };

interface WriteCase {
  readonly title: string;
  /** The create/update policy of `things` (AND-ed with `user_id = auth_user.id`). */
  readonly check: string;
  readonly actions?: readonly ('create' | 'update')[];
  /** Raw SQL run before the write (the update policy also filters the rows that can change). */
  readonly prepare?: string;
  readonly write: Write;
  readonly expected: Readonly<Record<DialectName, Expectation>>;
}

const post = (body: unknown): Write => ({ method: 'POST', body });
const patch = (patchBody: Record<string, unknown>, ids: readonly number[] = [1]): Write => ({
  method: 'PATCH',
  path: ids.length === 1 ? `/things/${ids[0]}` : `/things?id=in.(${ids.join(',')})`,
  patch: patchBody,
  ids,
});

/**
 * Seed rows (beforeEach): 1 alice draft 10.00 'zz' · 2 alice approved 10.00 · 3 bob draft 50.00 'zz'.
 * Each expectation says what the database stores and so what the check must decide.
 */
const CASES: readonly WriteCase[] = [
  // Enum and collation folding. MariaDB stores the enum member its _ci collation matches:
  // 'APPROVED', 'approved ' and 'Approved' are stored 'approved', 'DRAFT' is stored 'draft'.
  // PostgreSQL's domain folds nothing and refuses those spellings; SQLite stores the text as sent.
  ...(['APPROVED', 'approved '] as const).map((status): WriteCase => ({
    title: `status != 'approved': POST ${JSON.stringify(status)} (MariaDB stores 'approved')`,
    check: "status != 'approved'",
    write: post({ status }),
    expected: { mysql: REFUSED, postgres: DOMAIN_REJECTS, sqlite: stores({ status }) },
  })),
  {
    title: `status != 'approved': PATCH "Approved" (MariaDB stores 'approved')`,
    check: "status != 'approved'",
    write: patch({ status: 'Approved' }),
    expected: { mysql: REFUSED, postgres: DOMAIN_REJECTS, sqlite: stores({ status: 'Approved' }) },
  },
  {
    title: `status = 'draft': POST "DRAFT" is allowed where it is stored 'draft' (MariaDB)`,
    check: "status = 'draft'",
    write: post({ status: 'DRAFT' }),
    expected: { mysql: stores({ status: 'draft' }), postgres: DOMAIN_REJECTS, sqlite: REFUSED },
  },
  {
    title: `status = 'draft': PATCH "DRAFT" is allowed where it is stored 'draft' (MariaDB)`,
    check: "status = 'draft'",
    write: patch({ status: 'DRAFT' }),
    expected: { mysql: stores({ status: 'draft' }), postgres: DOMAIN_REJECTS, sqlite: REFUSED },
  },
  // Numeric rounding. PostgreSQL and MariaDB round to the column's scale (MariaDB with a note,
  // not an error, even in strict mode): 99.999 → 100.00, 10.004 → 10.00. SQLite's NUMERIC
  // affinity keeps the REAL as sent.
  {
    title: 'amount < 100: POST 99.999 (stored 100.00 on PostgreSQL and MariaDB)',
    check: 'amount < 100',
    write: post({ amount: 99.999 }),
    expected: { postgres: REFUSED, mysql: REFUSED, sqlite: stores({ amount: 99.999 }) },
  },
  {
    title: 'amount < 100: PATCH 99.999 (stored 100.00 on PostgreSQL and MariaDB)',
    check: 'amount < 100',
    write: patch({ amount: 99.999 }),
    expected: { postgres: REFUSED, mysql: REFUSED, sqlite: stores({ amount: 99.999 }) },
  },
  {
    title: 'amount <= 10: POST 10.004 is allowed where it is stored 10.00',
    check: 'amount <= 10',
    write: post({ amount: 10.004 }),
    expected: { postgres: stores({ amount: 10 }), mysql: stores({ amount: 10 }), sqlite: REFUSED },
  },
  {
    title: 'amount <= 10: PATCH 10.004 is allowed where it is stored 10.00',
    check: 'amount <= 10',
    write: patch({ amount: 10.004 }),
    expected: { postgres: stores({ amount: 10 }), mysql: stores({ amount: 10 }), sqlite: REFUSED },
  },
  // char(5). PostgreSQL pads to 'ab   ' and compares char(n) without its padding (a char(n)
  // value cast to text loses its trailing spaces, so its own WITH CHECK and the portable WHERE
  // see 'ab'); the driver returns the padded text. MariaDB strips a char(n)'s trailing spaces
  // when it reads it (no PAD_CHAR_TO_FULL_LENGTH): stored 'ab'. SQLite stores the text as sent.
  {
    title: `code != 'ab': POST "ab " (stored as 'ab' padded or stripped on PostgreSQL and MariaDB)`,
    check: "code != 'ab'",
    write: post({ code: 'ab ' }),
    expected: { postgres: REFUSED, mysql: REFUSED, sqlite: stores({ code: 'ab ' }) },
  },
  {
    title: `code != 'ab': PATCH "ab " (stored as 'ab' padded or stripped on PostgreSQL and MariaDB)`,
    check: "code != 'ab'",
    write: patch({ code: 'ab ' }),
    expected: { postgres: REFUSED, mysql: REFUSED, sqlite: stores({ code: 'ab ' }) },
  },
  {
    title: `code = 'ab': POST "ab  " is allowed where it is stored as 'ab' (PostgreSQL, MariaDB)`,
    check: "code = 'ab'",
    write: post({ code: 'ab  ' }),
    expected: { postgres: stores({ code: 'ab   ' }), mysql: stores({ code: 'ab' }), sqlite: REFUSED },
  },
  {
    title: `code = 'ab': PATCH "ab  " is allowed where it is stored as 'ab' (PostgreSQL, MariaDB)`,
    check: "code = 'ab'",
    prepare: "UPDATE things SET code = 'ab' WHERE id = 1",
    write: patch({ code: 'ab  ' }),
    expected: { postgres: stores({ code: 'ab   ' }), mysql: stores({ code: 'ab' }), sqlite: REFUSED },
  },
  // Column defaults: `approved` defaults to true on every database.
  ...[post({ status: 'draft' }), post([{ approved: false }, { status: 'draft' }])].map(
    (write): WriteCase => ({
      title: `approved = false: POST ${JSON.stringify(write.method === 'POST' ? write.body : null)} leaves approved to its default true`,
      check: 'approved = false',
      actions: ['create'],
      write,
      expected: { postgres: REFUSED, mysql: REFUSED, sqlite: REFUSED },
    }),
  ),
  {
    title: 'approved = false: POST {"approved": false} is allowed',
    check: 'approved = false',
    actions: ['create'],
    write: post({ approved: false }),
    expected: {
      postgres: stores({ approved: false }),
      mysql: stores({ approved: false }),
      sqlite: stores({ approved: false }),
    },
  },
  // Several rows: row 1 is a draft (any amount passes), row 2 is approved (its amount must stay under 100).
  {
    title: "status = 'draft' or amount < 100: PATCH of rows 1 and 2 to 150 breaks row 2: none changed",
    check: "status = 'draft' or amount < 100",
    actions: ['update'],
    write: patch({ amount: 150 }, [1, 2]),
    expected: { postgres: REFUSED, mysql: REFUSED, sqlite: REFUSED },
  },
  {
    title:
      "status = 'draft' or amount < 100: PATCH of rows 1 and 2 to 99.999 (stored 100.00) breaks row 2: none changed",
    check: "status = 'draft' or amount < 100",
    actions: ['update'],
    write: patch({ amount: 99.999 }, [1, 2]),
    expected: { postgres: REFUSED, mysql: REFUSED, sqlite: stores({ amount: 99.999 }) },
  },
  // Passing writes answer with the stored values.
  {
    title: "status = 'draft' and amount < 100 and approved: a passing POST answers 201 with the stored row",
    check: "status = 'draft' and amount < 100 and approved",
    write: post({ amount: 99.99, code: 'cd' }),
    expected: {
      postgres: stores({ status: 'draft', amount: 99.99, code: 'cd   ', approved: true }),
      mysql: stores({ status: 'draft', amount: 99.99, code: 'cd', approved: true }),
      sqlite: stores({ status: 'draft', amount: 99.99, code: 'cd', approved: true }),
    },
  },
  {
    title: 'amount < 100: a passing PATCH answers 200 and the row holds the stored values',
    check: 'amount < 100',
    write: patch({ amount: 50.004, code: 'ef ' }),
    expected: {
      postgres: stores({ amount: 50, code: 'ef   ' }),
      mysql: stores({ amount: 50, code: 'ef' }),
      sqlite: stores({ amount: 50.004, code: 'ef ' }),
    },
  },
];

forEachAuthDatabase(
  'create and update checks judge the stored row',
  (ctx, kind) => {
    /** Policies on `things`: the owner reads; create and update must also satisfy `check`. */
    const checkThings = (check: string, actions: readonly string[] = ['create', 'update']): Promise<void> =>
      setPolicies(ctx(), [
        { table_name: 'things', action: 'read', expression: 'user_id = auth_user.id' },
        ...actions.map((action) => ({
          table_name: 'things',
          action,
          expression: `user_id = auth_user.id and (${check})`,
        })),
      ]);

    beforeEach(async () => {
      const { alice, bob } = ctx();
      await resetRows(ctx(), 'things', THING_COLUMNS, [
        [1, alice.id, 'draft', 10, 'zz', false],
        [2, alice.id, 'approved', 10, null, false],
        [3, bob.id, 'draft', 50, 'zz', true],
      ]);
      await resetRows(
        ctx(),
        'guarded',
        ['id', 'user_id', 'body'],
        [
          [1, alice.id, 'alice'],
          [2, bob.id, 'bob'],
        ],
      );
    });

    describe('each write is judged on what the database stores', () => {
      for (const c of CASES) {
        it(c.title, async () => {
          const { http, alice } = ctx();
          await checkThings(c.check, c.actions);
          if (c.prepare !== undefined) await ctx().sql.exec(c.prepare);
          const expected = c.expected[kind];
          const before = await storedThings(ctx());
          const { write } = c;
          const reply =
            write.method === 'POST'
              ? await http.post('/things', write.body, alice.auth)
              : await http.patch(write.path, write.patch, alice.auth);
          const after = await storedThings(ctx());
          switch (expected.outcome) {
            case 'refused':
              expectError(reply, 403, 'policy_check_failed');
              expect(after, 'nothing written').toEqual(before);
              return;
            case 'rejected':
              expectError(reply, expected.status, expected.code);
              expect(after, 'nothing written').toEqual(before);
              return;
            case 'stored':
              break;
          }
          if (write.method === 'PATCH') {
            expect(reply.status, reply.text).toBe(200);
            expect(reply.json).toEqual({ updated: write.ids.length });
            expect(after).toEqual(
              before.map((r) => (write.ids.includes(Number(r.id)) ? { ...r, ...expected.values } : r)),
            );
            return;
          }
          expect(reply.status, reply.text).toBe(201);
          const answered = normaliseThing(reply.json as Record<string, unknown>);
          expect(after, 'exactly one row added').toHaveLength(before.length + 1);
          expect(
            after.find((r) => r.id === answered.id),
            'the answer is the stored row',
          ).toEqual(answered);
          expect(answered).toMatchObject({ user_id: alice.id, ...expected.values });
        });
      }
    });

    describe('triggers', () => {
      const skip = kind === 'sqlite' ? ' (skipped on sqlite: a SQLite trigger cannot rewrite NEW)' : '';
      const ownerOnly = (): Promise<void> =>
        setPolicies(ctx(), [{ table_name: 'guarded', action: 'all', expression: 'user_id = auth_user.id' }]);

      it.skipIf(kind === 'sqlite')(
        `user_id = auth_user.id: a BEFORE INSERT trigger moves the new row to another owner: 403, nothing written${skip}`,
        async () => {
          const { http, alice } = ctx();
          await ownerOnly();
          const before = await storedGuarded(ctx());
          expectError(
            await http.post('/guarded', { body: 'hijack' }, alice.auth),
            403,
            'policy_check_failed',
          );
          expect(await storedGuarded(ctx()), 'nothing written').toEqual(before);
        },
      );

      it.skipIf(kind === 'sqlite')(
        `user_id = auth_user.id: a BEFORE UPDATE trigger moves the row to another owner: 403, nothing changed${skip}`,
        async () => {
          const { http, alice } = ctx();
          await ownerOnly();
          const before = await storedGuarded(ctx());
          expectError(
            await http.patch('/guarded/1', { body: 'hijack' }, alice.auth),
            403,
            'policy_check_failed',
          );
          expect(await storedGuarded(ctx()), 'nothing changed').toEqual(before);
        },
      );

      it('user_id = auth_user.id: a row the trigger leaves alone is created with the caller as owner', async () => {
        const { http, alice } = ctx();
        await ownerOnly();
        const created = await http.post('/guarded', { body: 'fine' }, alice.auth);
        expect(created.status, created.text).toBe(201);
        const { id } = created.json as { id: number };
        expect(created.json).toEqual({ id, user_id: alice.id, body: 'fine' });
        expect((await storedGuarded(ctx())).find((r) => r.id === id)).toEqual(created.json);
      });
    });

    describe('the answer to a create is the stored row', () => {
      it('defaults and coercions: the 201 body equals the raw row and what GET reads', async () => {
        const { http, alice } = ctx();
        await checkThings('amount > 0');
        // PostgreSQL's domain takes no other spelling; MariaDB folds 'Draft', SQLite keeps it.
        const status = kind === 'postgres' ? 'draft' : 'Draft';
        const expected: Record<DialectName, Readonly<Record<string, unknown>>> = {
          postgres: { status: 'draft', amount: 12.35, code: 'ab   ', approved: true },
          mysql: { status: 'draft', amount: 12.35, code: 'ab', approved: true },
          sqlite: { status: 'Draft', amount: 12.345, code: 'ab ', approved: true },
        };
        const created = await http.post('/things', { status, amount: 12.345, code: 'ab ' }, alice.auth);
        expect(created.status, created.text).toBe(201);
        const body = created.json as Record<string, unknown>;
        expect(Object.keys(body).sort()).toEqual([...THING_COLUMNS].sort());
        expect(body).toMatchObject({ user_id: alice.id, ...expected[kind] });
        const raw = (await storedThings(ctx())).find((r) => r.id === body['id']);
        expect(raw, 'the raw row').toEqual(normaliseThing(body));
        const read = await http.get(`/things/${String(body['id'])}`, alice.auth);
        expect(read.status, read.text).toBe(200);
        expect(read.json, 'POST answers what GET reads').toEqual(body);
      });

      it('12.5 in numeric(6,2): the 201 body equals what GET reads', async () => {
        const { http, alice } = ctx();
        await checkThings('amount > 0');
        const created = await http.post('/things', { amount: 12.5 }, alice.auth);
        expect(created.status, created.text).toBe(201);
        const body = created.json as Record<string, unknown>;
        expect(body).toMatchObject({
          user_id: alice.id,
          status: 'draft',
          amount: 12.5,
          code: null,
          approved: true,
        });
        expect((await http.get(`/things/${String(body['id'])}`, alice.auth)).json).toEqual(body);
      });

      it(
        kind === 'mysql'
          ? 'POST {"id": 0} on an auto-increment key (MariaDB generates a new id): the answer is the new row, never the row whose id is 0'
          : 'POST {"id": 0} when a row with id 0 exists: 409, nothing written (PostgreSQL and SQLite store 0 as given)',
        async () => {
          const { http, alice, bob } = ctx();
          await checkThings('amount > 0');
          // Bob's row with id 0; MariaDB stores an explicit 0 only under NO_AUTO_VALUE_ON_ZERO.
          const insertZero = `INSERT INTO things (id, user_id, status, amount, code) VALUES (0, ${bob.id}, 'approved', 77, 'bob')`;
          await ctx().sql.exec(
            kind === 'mysql'
              ? `SET @saved_mode = @@sql_mode; SET SESSION sql_mode = CONCAT(@@sql_mode, ',NO_AUTO_VALUE_ON_ZERO'); ${insertZero}; SET SESSION sql_mode = @saved_mode`
              : insertZero,
          );
          const before = await storedThings(ctx());
          const bobs = before.find((r) => r.id === 0);
          expect(bobs).toMatchObject({ user_id: bob.id, status: 'approved' });
          const reply = await http.post('/things', { id: 0, amount: 5, code: 'mine' }, alice.auth);
          const after = await storedThings(ctx());
          if (kind !== 'mysql') {
            expectError(reply, 409, 'unique_violation');
            expect(after, 'nothing written').toEqual(before);
            return;
          }
          expect(reply.status, reply.text).toBe(201);
          const answered = normaliseThing(reply.json as Record<string, unknown>);
          expect(answered).toMatchObject({ user_id: alice.id, amount: 5, code: 'mine' });
          expect(answered.id, 'a new id').not.toBe(0);
          expect(after).toHaveLength(before.length + 1);
          expect(
            after.find((r) => r.id === answered.id),
            'the answer is the stored row',
          ).toEqual(answered);
          expect(
            after.find((r) => r.id === 0),
            "bob's row is untouched",
          ).toEqual(bobs);
        },
      );
    });
  },
  { ddl: STORED_ROW_DDL },
);
