// Differential property test of the two enforcement paths (docs/row-level-security.md): random policy sets ×
// users × requests, sent over real HTTP to four servers — PostgreSQL with native RLS, PostgreSQL
// with the portable path (-db.rls off), SQLite and MariaDB — must give the same statuses, the same
// bodies (as sent: `true`, never `1`) and leave the same rows. Policy rows may carry column rules (docs/policy-language.md "Columns"):
// then the requests also select, filter and order on hidden and masked columns and write bodies
// with protected or conditionally granted keys; masks may depend on rows of an inner table
// (`members`, itself under column rules), and each full read whose policy reads no other table is
// also compared with the in-process meaning (compiler/columns.ts `readableColumns` with
// `evaluate`, visibility by the compiled policy's check). On failure fast-check prints the seed (rerun with FC_SEED=<seed>;
// FC_RUNS and FC_COLUMN_RUNS set the run counts).

import fc from 'fast-check';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluate } from '../../compiler/evaluate.js';
import { compilePolicySet, type CompiledPolicy } from '../../compiler/policy-set.js';
import { dialects } from '../../compiler/sql/dialects.js';
import {
  ANONYMOUS,
  type AuthUser,
  type ColumnTypes,
  type DialectName,
  type PolicyRow,
} from '../../compiler/types.js';
import { columnRuleArbitrary as columnRuleArbitraryOf } from '../support/column-rule-arbitraries.js';
import { createTestDatabase, isAvailable, type TestDatabase } from '../support/databases.js';
import { call, type Reply } from '../support/http.js';
import { openRawSql, startTestServer, testConfig, type RawSql, type TestServer } from '../support/server.js';
import { newSecret } from '../support/secret.js';

const NUM_RUNS = Number(process.env['FC_RUNS'] ?? 25);
const COLUMN_RUNS = Number(process.env['FC_COLUMN_RUNS'] ?? 5);
const SEED = process.env['FC_SEED'] === undefined ? undefined : Number(process.env['FC_SEED']);

const DDL: Readonly<Record<DialectName, string>> = {
  mysql:
    'CREATE TABLE docs (id int PRIMARY KEY, user_id int, org_id int, title varchar(50), level int, published boolean NOT NULL DEFAULT false)',
  postgres:
    'CREATE TABLE docs (id integer PRIMARY KEY, user_id integer, org_id integer, title varchar(50), level integer, published boolean NOT NULL DEFAULT false)',
  sqlite:
    'CREATE TABLE docs (id INTEGER PRIMARY KEY, user_id INTEGER, org_id INTEGER, title varchar(50), level INTEGER, published BOOLEAN NOT NULL DEFAULT 0)',
};

type SeedRow = readonly [
  id: number,
  userId: number | null,
  orgId: number | null,
  title: string,
  level: number | null,
  published: boolean,
];
const SEED_ROWS: readonly SeedRow[] = [
  [1, 1, 10, 'u1', 1, true],
  [2, 1, 20, 'u1 secret', 5, false],
  [3, 2, 10, 'u2', 3, true],
  [4, 3, null, 'carol', 2, false],
  [5, null, 20, 'nobody', null, true],
  [6, 2, 20, 'u2 high', 9, false],
];

interface Target {
  readonly name: string;
  readonly kind: DialectName;
  readonly db: TestDatabase;
  readonly sql: RawSql;
  readonly server: TestServer;
}

/** Users as tokens (signed with the servers' secret; docs/authentication.md accepts them): anonymous has none. */
const USERS = {
  anonymous: undefined,
  alice: { user_id: 1, username: 'alice', org_id: 10 },
  bob: { user_id: 2, username: 'bob', org_id: 20 },
  carol: { user_id: 3, username: 'carol', org_id: '10' },
  admin: { user_id: 100, username: 'admin', is_admin: true },
} as const;
type UserName = keyof typeof USERS;

const EXPRESSIONS = [
  '',
  'auth_user.is_authenticated',
  'auth_user.is_admin',
  'user_id = auth_user.id',
  'org_id = auth_user.claims.org_id',
  'published = true',
  'published',
  'level > 2',
  'level <= 2 and user_id = auth_user.id',
  'not published or auth_user.is_admin',
  'title = auth_user.username',
  'user_id in (1, 2)',
  'org_id is null',
  'user_id = auth_user.id or published',
  'level is not null and level >= auth_user.id',
  'auth_user.claims.org_id is null',
];
const TABLES = ['docs', 'all'] as const;
const ACTIONS = ['create', 'read', 'update', 'delete', 'read_mine', 'all'] as const;

interface PolicyInput {
  readonly table_name: string;
  readonly action: string;
  readonly expression: string;
  /** The row's column rule (docs/policy-language.md "Columns"); left out: every column. */
  readonly columns?: string | null;
}

const policyArbitrary: fc.Arbitrary<PolicyInput> = fc
  .record({
    table_name: fc.constantFrom(...TABLES),
    action: fc.constantFrom(...ACTIONS),
    expression: fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom(...EXPRESSIONS) },
      {
        weight: 1,
        arbitrary: fc
          .tuple(
            fc.constantFrom(...EXPRESSIONS.slice(1)),
            fc.constantFrom('and', 'or'),
            fc.constantFrom(...EXPRESSIONS.slice(1)),
          )
          .map(([a, op, b]) => `(${a}) ${op} (${b})`),
      },
      // A column the table lacks, on the `all` level: 403 naming it (docs/policy-language.md).
      { weight: 1, arbitrary: fc.constant('owner = auth_user.id') },
    ),
  })
  .filter((p) => p.table_name === 'all' || !p.expression.includes('owner'));

interface RequestSpec {
  readonly user: UserName;
  readonly method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  readonly path: string;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

const docId = fc.integer({ min: 1, max: 7 });
const bodyArbitrary = fc.record(
  {
    user_id: fc.constantFrom(1, 2, 3, null),
    org_id: fc.constantFrom(10, 20, null),
    title: fc.constantFrom('alice', 'bob', 'x'),
    level: fc.integer({ min: 0, max: 9 }),
    published: fc.boolean(),
  },
  { requiredKeys: [] },
);

const requestArbitrary = (nextId: () => number): fc.Arbitrary<RequestSpec> =>
  fc
    .tuple(
      fc.constantFrom(...(Object.keys(USERS) as UserName[])),
      fc.integer({ min: 0, max: 8 }),
      docId,
      bodyArbitrary,
      fc.integer({ min: 0, max: 9 }),
    )
    .map(([user, op, id, body, level]): RequestSpec => {
      switch (op) {
        case 0:
          return { user, method: 'GET', path: '/docs?order=id' };
        case 1:
          return { user, method: 'GET', path: '/docs?mine&order=id' };
        case 2:
          return { user, method: 'GET', path: `/docs/${id}` };
        case 3:
          return { user, method: 'GET', path: `/docs?count&level=gte.${level}` };
        case 4:
          // The body may leave `published` to its database default: both paths judge the stored row.
          return { user, method: 'POST', path: '/docs', body: { id: nextId(), ...body } };
        case 5:
          return { user, method: 'PATCH', path: `/docs/${id}`, body };
        case 6:
          return { user, method: 'PATCH', path: `/docs?level=gte.${level}`, body: { level } };
        case 7:
          return { user, method: 'DELETE', path: `/docs/${id}` };
        default:
          return { user, method: 'DELETE', path: `/docs?level=lt.${level}` };
      }
    });

const COLUMNS = ['id', 'user_id', 'org_id', 'title', 'level', 'published'] as const;
type Column = (typeof COLUMNS)[number];
type DataColumn = Exclude<Column, 'id'>;
const DATA_COLUMNS = COLUMNS.slice(1) as readonly DataColumn[];
const COLUMN_TYPES: ColumnTypes = new Map([
  ['id', 'integer'],
  ['user_id', 'integer'],
  ['org_id', 'integer'],
  ['title', 'text'],
  ['level', 'integer'],
  ['published', 'boolean'],
]);

/** A column rule; `owner` (a column docs lacks) stays only on rows for table `all`. */
const columnRuleArbitrary = columnRuleArbitraryOf(COLUMNS, ['owner']);

/** Policy rows with column rules, reads weighted so that several rows meet and masks appear. */
const columnPolicyArbitrary: fc.Arbitrary<PolicyInput> = fc
  .tuple(
    policyArbitrary,
    fc.constantFrom('read', 'read', 'read', 'read_mine', 'create', 'update', 'delete', 'all'),
    columnRuleArbitrary,
  )
  .map(([p, action, rule]) => ({ ...p, action, columns: rule(p.table_name) }));

/** Conditions that read another table: masks compiled with subqueries, inner tables under their own policies. */
const RELATION_EXPRESSIONS = [
  'org_id in (select org_id from members where user_id = auth_user.id)',
  'exists (select from members where members.org_id = docs.org_id and members.user_id = auth_user.id)',
  'org_id in (select org_id from members)',
  'not exists (select from members where members.user_id = docs.user_id)',
];

/**
 * Two read rows of docs under conditions that depend on the row, one granting more columns than
 * the other: the columns only one of them grants are masked for a caller both apply to.
 */
const maskPairArbitrary: fc.Arbitrary<readonly PolicyInput[]> = fc
  .tuple(
    fc.constantFrom(...EXPRESSIONS.slice(3), ...RELATION_EXPRESSIONS),
    fc.constantFrom(...EXPRESSIONS.slice(3), ...RELATION_EXPRESSIONS),
    fc.constantFrom('read', 'all'),
    columnRuleArbitrary,
    fc.subarray([...DATA_COLUMNS], { minLength: 1, maxLength: 3 }),
  )
  .map(([a, b, action, rule, names]) => [
    { table_name: 'docs', action, expression: a, columns: rule('docs') },
    { table_name: 'docs', action: 'read', expression: b, columns: names.join(', ') },
  ]);

/** A row of the inner table, whose columns may be hidden from the callers whose subqueries read them. */
const memberRowArbitrary: fc.Arbitrary<PolicyInput> = fc
  .tuple(
    fc.constantFrom('read', 'all'),
    fc.constantFrom('', 'user_id = auth_user.id', 'auth_user.is_admin', 'auth_user.is_authenticated'),
    columnRuleArbitraryOf(['id', 'user_id', 'org_id']),
  )
  .map(([action, expression, rule]) => ({
    table_name: 'members',
    action,
    expression,
    columns: rule('members'),
  }));

/** Policy sets with column rules: random rows, often with a pair that masks. */
const columnPolicySetArbitrary: fc.Arbitrary<readonly PolicyInput[]> = fc
  .tuple(
    fc.array(columnPolicyArbitrary, { maxLength: 4 }),
    fc.option(maskPairArbitrary, { freq: 2, nil: undefined }),
    fc.array(memberRowArbitrary, { maxLength: 2 }),
  )
  .map(([rows, pair, members]) => [...(pair ?? []), ...rows, ...members])
  .filter((rows) => rows.length > 0);

/** Filters of each column, on values the seeded and written rows hold. */
const FILTERS: Readonly<Record<DataColumn, readonly string[]>> = {
  user_id: ['eq.1', 'eq.2', 'is.null', 'neq.1'],
  org_id: ['eq.10', 'eq.20', 'is.null', 'in.(10,20)'],
  title: ['eq.u1', 'eq.carol', 'is.null', 'like.u*'],
  level: ['gte.3', 'lt.3', 'is.null', 'eq.1'],
  published: ['is.true', 'is.false', 'is.null', 'eq.true'],
};

const selectArbitrary = fc
  .subarray([...COLUMNS], { minLength: 1, maxLength: 4 })
  .map((names) => `select=${names.join(',')}`);
const filterArbitrary = fc
  .constantFrom(...DATA_COLUMNS)
  .chain((c) => fc.constantFrom(...FILTERS[c]).map((f) => `${c}=${f}`));
const orderArbitrary = fc
  .tuple(
    fc.constantFrom(...DATA_COLUMNS),
    fc.constantFrom('', '.asc', '.desc'),
    fc.constantFrom('', '.nullsfirst', '.nullslast'),
  )
  .map(([c, dir, nulls]) => `order=${c}${dir}${nulls}`);

/** Reads and writes that name hidden, masked and protected columns. */
const columnRequestArbitrary = (nextId: () => number): fc.Arbitrary<RequestSpec> =>
  fc
    .tuple(
      fc.constantFrom(...(Object.keys(USERS) as UserName[])),
      fc.integer({ min: 0, max: 13 }),
      docId,
      bodyArbitrary,
      selectArbitrary,
      filterArbitrary,
      orderArbitrary,
    )
    .map(([user, op, id, body, select, filter, order]): RequestSpec => {
      switch (op) {
        case 0:
        case 1:
          return { user, method: 'GET', path: '/docs?order=id' };
        case 2:
          return { user, method: 'GET', path: `/docs?${select}&${filter}&${order}` };
        case 3:
          return { user, method: 'GET', path: `/docs?${filter}&${order}` };
        case 4:
          return { user, method: 'GET', path: `/docs?mine&${select}&${order}` };
        case 5:
          return { user, method: 'GET', path: `/docs/${id}?${select}` };
        case 6:
          return { user, method: 'GET', path: `/docs?count&${filter}` };
        case 7:
          return { user, method: 'POST', path: '/docs', body: { id: nextId(), ...body } };
        case 8:
          return { user, method: 'PATCH', path: `/docs/${id}`, body };
        case 9:
          return { user, method: 'PATCH', path: `/docs?${filter}`, body };
        case 10:
          return { user, method: 'DELETE', path: `/docs?${filter}` };
        case 11:
          return { user, method: 'GET', path: `/rest/v1/docs?${select}&${filter}&${order}` };
        case 12:
          return {
            user,
            method: 'DELETE',
            path: `/rest/v1/docs?${filter}&${select}`,
            headers: { Prefer: 'return=representation' },
          };
        default:
          return {
            user,
            method: 'PATCH',
            path: `/rest/v1/docs?id=eq.${id}&${select}`,
            body,
            headers: { Prefer: 'return=representation' },
          };
      }
    });

/** auth_user of each user's token, as the servers derive it. */
const authUserOf = (name: UserName): AuthUser => {
  const claims: Readonly<Record<string, unknown>> | undefined = USERS[name];
  if (claims === undefined) return ANONYMOUS;
  return {
    id: Number(claims['user_id']),
    username: String(claims['username']),
    is_admin: claims['is_admin'] === true,
    is_authenticated: true,
    claims,
  };
};

/** A row read straight from a database: SQLite stores `published` as 0/1, drivers give int8 as bigint. */
const normalizeRow = (row: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries(row).map(([k, v]) => [
      k,
      k === 'published' && v !== null
        ? v === true || v === 1 || v === '1'
        : typeof v === 'bigint'
          ? Number(v)
          : v,
    ]),
  );

/** What must agree: the status, the error code or the body. */
function outcome(reply: Reply): unknown {
  const json = reply.json as Record<string, unknown> | Array<Record<string, unknown>> | undefined;
  if (reply.status >= 400) {
    // The PostgREST dialect's flat error: rest's own code leads its details.
    const details = (json as { details?: unknown } | undefined)?.details;
    const flat = typeof details === 'string' ? details.split(':')[0] : undefined;
    return {
      status: reply.status,
      code: flat ?? (json as { error?: { code?: unknown } } | undefined)?.error?.code,
    };
  }
  // Answers are compared as sent: a boolean, masked or not, is `true`/`false` on every database.
  if (Array.isArray(json)) return { status: reply.status, rows: json };
  return { status: reply.status, body: json };
}

/** The rows a write hands back come in no promised order (RETURNING's): compared as a set. */
function inAnyOrder(o: unknown): unknown {
  const rows = (o as { rows?: unknown }).rows;
  if (!Array.isArray(rows)) return o;
  return {
    ...(o as object),
    rows: rows
      .map((r) => JSON.stringify(r))
      .sort()
      .map((r) => JSON.parse(r) as unknown),
  };
}

describe(`native RLS ≡ portable path ≡ SQLite ≡ MariaDB (postgres)`, () => {
  const secret = newSecret();
  const key = new TextEncoder().encode(secret);
  const tokens = new Map<UserName, string>();
  let adminAuth: Record<string, string>;
  const targets: Target[] = [];

  const start = async (name: string, kind: DialectName, rls: boolean): Promise<Target> => {
    const db = await createTestDatabase(kind);
    const sql = await openRawSql(db);
    await sql.exec(DDL[kind]);
    // The inner table of the relation policies of the column rules' test (docs/policy-language.md).
    await sql.exec('CREATE TABLE members (id integer PRIMARY KEY, user_id integer, org_id integer)');
    await sql.exec('INSERT INTO members (id, user_id, org_id) VALUES (1, 1, 10), (2, 2, 20), (3, 3, 10)');
    const server = await startTestServer({
      ...testConfig(db.url),
      db: { url: db.url, rls },
      auth: { enabled: true, secret, tokenTtlSeconds: 3600 },
    });
    const setup = await call(server.url, 'POST', '/auth/setup', { json: {} });
    expect(setup.status, setup.text).toBe(201);
    return { name, kind, db, sql, server };
  };

  beforeAll(async () => {
    for (const [name, claims] of Object.entries(USERS) as Array<
      [UserName, Record<string, unknown> | undefined]
    >) {
      if (claims !== undefined) {
        tokens.set(
          name,
          await new SignJWT(claims)
            .setProtectedHeader({ alg: 'HS256' })
            .setIssuedAt()
            .setExpirationTime('1h')
            .sign(key),
        );
      }
    }
    adminAuth = { authorization: `Bearer ${tokens.get('admin') ?? ''}` };
    targets.push(
      await start('native', 'postgres', true),
      await start('portable', 'postgres', false),
      await start('sqlite', 'sqlite', false),
      ...(isAvailable('mysql') ? [await start('mariadb', 'mysql', false)] : []),
    );
  }, 120_000);
  afterAll(async () => {
    for (const t of targets) {
      await t.server.handle.close();
      await t.sql.close();
      await t.db.drop();
    }
  });

  const reset = async (t: Target): Promise<void> => {
    await t.sql.exec('DELETE FROM docs');
    const literal = (v: SeedRow[number]): string =>
      v === null
        ? 'NULL'
        : typeof v === 'string'
          ? `'${v}'`
          : typeof v === 'boolean'
            ? t.kind === 'postgres'
              ? String(v)
              : v
                ? '1'
                : '0'
            : String(v);
    await t.sql.exec(
      `INSERT INTO docs (id, user_id, org_id, title, level, published) VALUES ${SEED_ROWS.map((r) => `(${r.map(literal).join(', ')})`).join(', ')}`,
    );
  };
  const rowsOf = async (t: Target): Promise<Array<Record<string, unknown>>> =>
    (await t.sql.rows('SELECT id, user_id, org_id, title, level, published FROM docs ORDER BY id')).map(
      normalizeRow,
    );

  const setPolicies = async (t: Target, policies: readonly PolicyInput[]): Promise<unknown> => {
    const cleared = await call(t.server.url, 'DELETE', '/auth_policies?id=gt.3', { headers: adminAuth });
    expect(cleared.status, cleared.text).toBe(200);
    if (policies.length === 0) return undefined;
    const added = await call(t.server.url, 'POST', '/auth_policies', {
      headers: adminAuth,
      json: policies.map((p) => ({ ...p, description: 'property' })),
    });
    return outcome(added);
  };

  /** The read policy of docs as the servers hold it now (read from SQLite's), compiled in-process. */
  const readPolicyNow = async (): Promise<CompiledPolicy> => {
    const sqlite = targets.find((t) => t.kind === 'sqlite');
    if (sqlite === undefined) throw new Error('the suite did not start');
    const rows = await sqlite.sql.rows(
      'SELECT id, table_name, action, expression, description, columns FROM auth_policies ORDER BY id',
    );
    const policyRows = rows.map((r): PolicyRow => ({
      id: Number(r['id']),
      table_name: String(r['table_name']),
      action: String(r['action']),
      expression: String(r['expression']),
      description: String(r['description']),
      columns: typeof r['columns'] === 'string' ? r['columns'] : null,
    }));
    return compilePolicySet(policyRows, dialects.sqlite).policyFor('docs', 'read', COLUMN_TYPES);
  };

  /**
   * What `GET /docs?order=id` answers by the in-process meaning on the stored `rows`: the rows the
   * compiled policy lets through, each column shown, masked by its condition, or left out.
   * Undefined when the policy cannot apply (a missing column: its refusal is compared across paths).
   */
  const expectedRead = (
    policy: CompiledPolicy,
    user: AuthUser,
    rows: ReadonlyArray<Record<string, unknown>>,
  ): unknown => {
    // Rows of another table decide a subquery: only the databases judge it (compared across paths).
    if (policy.missingColumns.length > 0 || policy.issues.length > 0 || policy.relations.size > 0)
      return undefined;
    const decision = policy.decide(user);
    if (decision.kind === 'deny') return { status: user.is_authenticated ? 403 : 401 };
    const access = policy.columnRules?.read(user, ['id']);
    const visible = decision.kind === 'allow' ? rows : rows.filter((row) => policy.check(row, user) === true);
    const shown = (row: Record<string, unknown>): Record<string, unknown> =>
      Object.fromEntries(
        COLUMNS.flatMap((c): Array<[string, unknown]> => {
          const a = access?.columns.get(c);
          if (a === undefined || a.kind === 'always') return [[c, row[c]]];
          if (a.kind === 'hidden') return [];
          return [[c, evaluate(a.when, user, row, COLUMN_TYPES) === true ? row[c] : null]];
        }),
      );
    return { status: 200, rows: visible.map(shown) };
  };

  /**
   * Sets `policies` everywhere, sends `requests` to every server, and compares everything; with
   * `reference`, each `GET /docs?order=id` is also compared with expectedRead.
   */
  const agree = async (
    policies: readonly PolicyInput[],
    requests: readonly RequestSpec[],
    reference = false,
  ): Promise<void> => {
    for (const t of targets) await reset(t);
    const set = await Promise.all(targets.map((t) => setPolicies(t, policies)));
    for (const answer of set.slice(1)) expect(answer, 'setting policies').toEqual(set[0]);
    const policy = reference ? await readPolicyNow() : undefined;
    for (const r of requests) {
      const token = tokens.get(r.user);
      const options = {
        headers: { ...r.headers, ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
        ...(r.body === undefined ? {} : { json: r.body }),
      };
      const label = `${r.user} ${r.method} ${r.path} ${JSON.stringify(r.body ?? null)}`;
      const portableTarget = targets[1];
      const expected =
        policy !== undefined &&
        portableTarget !== undefined &&
        r.method === 'GET' &&
        r.path === '/docs?order=id'
          ? expectedRead(policy, authUserOf(r.user), await rowsOf(portableTarget))
          : undefined;
      const outcomes = await Promise.all(
        targets.map(async (t) => {
          const o = outcome(await call(t.server.url, r.method, r.path, options));
          return r.method === 'GET' ? o : inAnyOrder(o);
        }),
      );
      const portable = outcomes[1];
      targets.forEach((t, i) => expect(outcomes[i], `${t.name} vs portable: ${label}`).toEqual(portable));
      if (expected !== undefined) {
        const actual =
          (expected as { rows?: unknown }).rows === undefined
            ? { status: (portable as { status: number }).status }
            : portable;
        expect(actual, `in-process meaning: ${label}`).toEqual(expected);
      }
    }
    const stored = await Promise.all(targets.map(rowsOf));
    targets.forEach((t, i) => expect(stored[i], `stored rows: ${t.name} vs portable`).toEqual(stored[1]));
  };

  it('agrees on the counter-examples found so far', async () => {
    // An anonymous update that breaks WITH CHECK: 401 on both paths (42501 for anonymous), not 403.
    await agree(
      [{ table_name: 'docs', action: 'update', expression: 'level > 2' }],
      [
        { user: 'anonymous', method: 'PATCH', path: '/docs/2', body: { level: 0 } },
        { user: 'alice', method: 'PATCH', path: '/docs/2', body: { level: 0 } },
      ],
    );
    // A create policy reading a column the body leaves to its database default.
    await agree(
      [
        { table_name: 'docs', action: 'create', expression: 'published' },
        { table_name: 'docs', action: 'read', expression: '' },
      ],
      [
        { user: 'alice', method: 'POST', path: '/docs', body: { id: 900, title: 'x' } },
        { user: 'alice', method: 'POST', path: '/docs', body: { id: 901, published: true } },
      ],
    );
    await agree(
      [{ table_name: 'docs', action: 'create', expression: 'not published' }],
      [{ user: 'bob', method: 'POST', path: '/docs', body: { id: 902, level: 1 } }],
    );
  });

  it('gives the same statuses, bodies and stored rows on every path', async () => {
    let id = 1000;
    await fc.assert(
      fc.asyncProperty(
        fc.array(policyArbitrary, { maxLength: 4 }),
        fc.array(
          requestArbitrary(() => (id += 1)),
          { minLength: 1, maxLength: 8 },
        ),
        (policies, requests) => agree(policies, requests),
      ),
      { numRuns: NUM_RUNS, ...(SEED === undefined ? {} : { seed: SEED }) },
    );
  }, 600_000);

  it('agrees with column rules: hidden, masked and protected columns, and the in-process meaning', async () => {
    let id = 5000;
    await fc.assert(
      fc.asyncProperty(
        columnPolicySetArbitrary,
        fc.array(
          columnRequestArbitrary(() => (id += 1)),
          { minLength: 1, maxLength: 10 },
        ),
        (policies, requests) => agree(policies, requests, true),
      ),
      { numRuns: COLUMN_RUNS, ...(SEED === undefined ? {} : { seed: SEED }) },
    );
  }, 600_000);
});
