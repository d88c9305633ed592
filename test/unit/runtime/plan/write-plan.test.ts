// The write plan: one statement where the database can judge the rows inside it, a transaction
// everywhere else, a plain UPDATE when nothing needs judging.

import { describe, expect, it } from 'vitest';
import {
  planCreate,
  planUpdate,
  type WriteCapabilities,
  type WriteDemands,
} from '../../../../runtime/plan/write-plan.js';

/** The three databases as their adapters and dialects describe them. */
const DATABASES: Readonly<Record<string, WriteCapabilities>> = {
  postgres: { returning: { insert: true, update: true }, checkInStatement: true, manyRowInsert: true },
  sqlite: { returning: { insert: true, update: true }, checkInStatement: false, manyRowInsert: false },
  mariadb: { returning: { insert: true, update: false }, checkInStatement: false, manyRowInsert: false },
  mysql: { returning: { insert: false, update: false }, checkInStatement: false, manyRowInsert: false },
};

const NOTHING: WriteDemands = { check: false, checksStoredRows: false, preparesPatch: false };
const CHECK: WriteDemands = { ...NOTHING, check: true };
const GUARD: WriteDemands = { ...NOTHING, checksStoredRows: true };
const PATCH_GUARD: WriteDemands = { ...NOTHING, preparesPatch: true };

const one = { rows: 1, fitsOneStatement: true };
const many = { rows: 3, fitsOneStatement: true };
const tooMany = { rows: 30_000, fitsOneStatement: false };

describe('planCreate', () => {
  it.each([
    ['postgres', NOTHING, one, 'one-statement'],
    ['postgres', CHECK, one, 'one-statement'],
    ['postgres', CHECK, many, 'one-statement'],
    ['postgres', CHECK, tooMany, 'transaction'],
    ['postgres', GUARD, one, 'transaction'],
    ['sqlite', NOTHING, one, 'one-statement'],
    ['sqlite', CHECK, one, 'transaction'],
    ['sqlite', NOTHING, many, 'transaction'],
    ['mariadb', NOTHING, one, 'one-statement'],
    ['mariadb', CHECK, one, 'transaction'],
    ['mysql', NOTHING, one, 'transaction'],
    ['mysql', CHECK, many, 'transaction'],
  ] as const)('%s, %o, %o → %s', (database, demands, shape, kind) => {
    const caps = DATABASES[database];
    if (caps === undefined) throw new Error(database);
    expect(planCreate(caps, demands, shape)).toEqual({ kind });
  });
});

describe('planUpdate', () => {
  it.each([
    ['postgres', NOTHING, 'plain'],
    ['postgres', CHECK, 'one-statement'],
    ['postgres', PATCH_GUARD, 'one-statement'],
    ['postgres', GUARD, 'transaction'],
    ['sqlite', NOTHING, 'plain'],
    ['sqlite', CHECK, 'transaction'],
    ['mariadb', CHECK, 'transaction'],
    ['mysql', NOTHING, 'plain'],
    ['mysql', CHECK, 'transaction'],
    ['mysql', PATCH_GUARD, 'transaction'],
  ] as const)('%s, %o → %s', (database, demands, kind) => {
    const caps = DATABASES[database];
    if (caps === undefined) throw new Error(database);
    expect(planUpdate(caps, demands)).toEqual({ kind });
  });
});
