// The write plan: one statement where the database can judge the rows inside it, a transaction
// everywhere else, with the stored rows read back the way the database allows.

import { describe, expect, it } from 'vitest';
import { dialects } from '../../../../compiler/sql/dialects.js';
import { SqlBuilder } from '../../../../compiler/sql/fragment.js';
import type { WriteRow } from '../../../../runtime/enforce/authorizer.js';
import {
  planCreate,
  planUpdate,
  type WriteCapabilities,
  type WritePlan,
  type WritePolicy,
} from '../../../../runtime/plan/write-plan.js';
import { fakeTable } from '../../../support/fake-schema.js';

/** The databases as their adapters and dialects describe them. */
const DATABASES = {
  postgres: {
    returning: { insert: true, update: true, delete: true },
    checkInStatement: true,
    manyRowInsert: true,
  },
  sqlite: {
    returning: { insert: true, update: true, delete: true },
    checkInStatement: false,
    manyRowInsert: false,
  },
  mariadb: {
    returning: { insert: true, update: false, delete: true },
    checkInStatement: false,
    manyRowInsert: false,
  },
  mysql: {
    returning: { insert: false, update: false, delete: false },
    checkInStatement: false,
    manyRowInsert: false,
  },
} as const satisfies Record<string, WriteCapabilities>;

const table = fakeTable('todos', { id: 'integer', title: 'text', done: 'boolean' });
const check = new SqlBuilder(dialects.postgres).appendIdent('done').build();

const NOTHING: WritePolicy = { check: undefined, checksStoredRows: false, preparesPatch: false };
/** What the policy asks, by name: a check on the stored rows, a guard reading them, a guard preparing a patch. */
const POLICIES = {
  nothing: NOTHING,
  check: { ...NOTHING, check },
  guard: { ...NOTHING, checksStoredRows: true },
  'check+guard': { ...NOTHING, check, checksStoredRows: true },
  'patch guard': { ...NOTHING, preparesPatch: true },
} as const satisfies Record<string, WritePolicy>;

const ROWS = {
  one: [{ title: 'a' }],
  many: [{ title: 'a' }, { title: 'b' }],
  // More parameters than PostgreSQL's protocol can bind in one statement.
  'too many': Array.from({ length: 30_000 }, (): WriteRow => ({ title: 'a' })),
} as const satisfies Record<string, readonly WriteRow[]>;

/** A plan in a word: `one-statement`, or `transaction` and how it reads the stored rows back. */
const summary = (plan: WritePlan): string =>
  plan.kind === 'one-statement' ? plan.kind : `${plan.kind}, ${plan.readBack}`;

type Database = keyof typeof DATABASES;
type Policy = keyof typeof POLICIES;

describe('planCreate', () => {
  it.each<[Database, Policy, keyof typeof ROWS, string]>([
    ['postgres', 'nothing', 'one', 'one-statement'],
    ['postgres', 'nothing', 'many', 'one-statement'],
    ['postgres', 'nothing', 'too many', 'transaction, in-statement'],
    ['postgres', 'check', 'one', 'one-statement'],
    ['postgres', 'check', 'many', 'one-statement'],
    ['postgres', 'check', 'too many', 'transaction, in-statement'],
    ['postgres', 'guard', 'one', 'transaction, in-statement'],
    ['postgres', 'check+guard', 'many', 'transaction, in-statement'],
    ['sqlite', 'nothing', 'one', 'one-statement'],
    ['sqlite', 'nothing', 'many', 'transaction, in-statement'],
    ['sqlite', 'check', 'one', 'transaction, in-statement'],
    ['sqlite', 'check', 'many', 'transaction, in-statement'],
    ['sqlite', 'guard', 'one', 'transaction, in-statement'],
    ['mariadb', 'nothing', 'one', 'one-statement'],
    ['mariadb', 'nothing', 'many', 'transaction, in-statement'],
    ['mariadb', 'check', 'one', 'transaction, in-statement'],
    ['mariadb', 'check', 'many', 'transaction, in-statement'],
    ['mysql', 'nothing', 'one', 'transaction, by-key'],
    ['mysql', 'nothing', 'many', 'transaction, by-key'],
    ['mysql', 'check', 'one', 'transaction, by-key'],
    ['mysql', 'check', 'many', 'transaction, by-key'],
    ['mysql', 'guard', 'one', 'transaction, by-key'],
  ])('%s, %s, %s row(s) → %s', (database, policy, rows, expected) => {
    const plan = planCreate({
      capabilities: DATABASES[database],
      policy: POLICIES[policy],
      table,
      rows: ROWS[rows],
      selected: table.columns,
    });
    expect(summary(plan)).toBe(expected);
  });

  it('reads nothing back when the answer shows no column and nothing is judged', () => {
    const plan = planCreate({
      capabilities: DATABASES.mysql,
      policy: NOTHING,
      table,
      rows: ROWS.one,
      selected: [],
    });
    expect(summary(plan)).toBe('transaction, none');
  });

  it('hands back the selected columns and a check that fails its own statement', () => {
    const selected = table.columns.slice(1, 2);
    const plan = planCreate({
      capabilities: DATABASES.postgres,
      policy: POLICIES.check,
      table,
      rows: ROWS.one,
      selected,
    });
    expect(plan).toEqual({
      kind: 'one-statement',
      stored: { columns: selected, check: { name: 'rest_check', predicate: check, raising: true } },
    });
  });

  it('judges the flags in a transaction when the check cannot fail its statement', () => {
    const plan = planCreate({
      capabilities: DATABASES.sqlite,
      policy: POLICIES.check,
      table,
      rows: ROWS.one,
      selected: [],
    });
    expect(plan).toEqual({
      kind: 'transaction',
      readBack: 'in-statement',
      stored: { columns: [], check: { name: 'rest_check', predicate: check, raising: false } },
    });
  });

  it('hands a guard that reads the stored rows their primary key, whatever select asks for', () => {
    const plan = planCreate({
      capabilities: DATABASES.postgres,
      policy: POLICIES.guard,
      table,
      rows: ROWS.one,
      selected: [],
    });
    expect(plan.stored).toEqual({ columns: table.columns.filter((c) => c.name === 'id') });
  });
});

describe('planUpdate', () => {
  it.each<[Database, Policy, string]>([
    ['postgres', 'nothing', 'one-statement'],
    ['postgres', 'check', 'one-statement'],
    ['postgres', 'patch guard', 'one-statement'],
    ['postgres', 'guard', 'transaction, in-statement'],
    ['postgres', 'check+guard', 'transaction, in-statement'],
    ['sqlite', 'nothing', 'one-statement'],
    ['sqlite', 'check', 'transaction, in-statement'],
    ['sqlite', 'patch guard', 'transaction, none'],
    ['sqlite', 'guard', 'transaction, in-statement'],
    ['mariadb', 'nothing', 'one-statement'],
    ['mariadb', 'check', 'transaction, by-key'],
    ['mariadb', 'patch guard', 'transaction, none'],
    ['mysql', 'nothing', 'one-statement'],
    ['mysql', 'check', 'transaction, by-key'],
    ['mysql', 'patch guard', 'transaction, none'],
    ['mysql', 'guard', 'transaction, by-key'],
  ])('%s, %s → %s', (database, policy, expected) => {
    const plan = planUpdate({ capabilities: DATABASES[database], policy: POLICIES[policy], table });
    expect(summary(plan)).toBe(expected);
  });

  it('returns no column in one statement: only the flags of a check that fails its own statement', () => {
    expect(planUpdate({ capabilities: DATABASES.postgres, policy: NOTHING, table })).toEqual({
      kind: 'one-statement',
      stored: { columns: [] },
    });
    expect(planUpdate({ capabilities: DATABASES.postgres, policy: POLICIES.check, table })).toEqual({
      kind: 'one-statement',
      stored: { columns: [], check: { name: 'rest_check', predicate: check, raising: true } },
    });
  });

  it('reads the primary key back for a guard that reads the stored rows', () => {
    const plan = planUpdate({ capabilities: DATABASES.mysql, policy: POLICIES['check+guard'], table });
    expect(plan).toEqual({
      kind: 'transaction',
      readBack: 'by-key',
      stored: {
        columns: table.columns.filter((c) => c.name === 'id'),
        check: { name: 'rest_check', predicate: check, raising: false },
      },
    });
  });
});
