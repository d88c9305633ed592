// Which columns native RLS withholds from the request role: those no request reads, whoever asks.

import { describe, expect, it } from 'vitest';
import { compilePolicySet } from '../../../../compiler/policy-set.js';
import { withheldColumns } from '../../../../compiler/rls/column-privileges.js';
import { postgresDialect } from '../../../../compiler/sql/postgres-dialect.js';
import type { ColumnTypes, PolicyRow } from '../../../../compiler/types.js';

const columns: ColumnTypes = new Map([
  ['id', 'integer'],
  ['user_id', 'integer'],
  ['email', 'text'],
  ['note', 'text'],
  ['flag', 'boolean'],
]);

let nextId = 1;
const row = (table_name: string, action: string, expression: string, cols: string | null): PolicyRow => ({
  id: nextId++,
  table_name,
  action,
  expression,
  description: '',
  columns: cols,
});

const withheld = (rows: readonly PolicyRow[]): readonly string[] =>
  withheldColumns({
    policies: compilePolicySet(rows, postgresDialect),
    table: 'people',
    columns,
    primaryKey: ['id'],
  });

describe('withheldColumns', () => {
  it('withholds what neither read nor read_mine grants, never the primary key', () => {
    expect(withheld([row('people', 'all', 'user_id = auth_user.id', 'user_id, email')])).toEqual([
      'note',
      'flag',
    ]);
    expect(withheld([row('people', 'all', 'true', 'email')])).toEqual(['user_id', 'note', 'flag']);
  });

  it('keeps what any read or read_mine row grants, even under a condition', () => {
    expect(
      withheld([
        row('people', 'read', 'user_id = auth_user.id', 'email'),
        row('people', 'read', 'auth_user.is_admin', '* except (note)'),
        row('people', 'read_mine', 'user_id = auth_user.id', 'note'),
      ]),
    ).toEqual([]);
  });

  it('keeps what a policy expression reads, here or in another table’s subquery', () => {
    expect(withheld([row('people', 'all', 'flag', 'id')])).toEqual(['user_id', 'email', 'note']);
    expect(
      withheld([
        row('people', 'all', 'true', 'id'),
        row('notes', 'read', 'owner in (select user_id from people where note = auth_user.username)', null),
      ]),
    ).toEqual(['email', 'flag']);
  });

  it('withholds nothing without column rules', () => {
    expect(withheld([row('people', 'all', 'user_id = auth_user.id', null)])).toEqual([]);
    expect(withheld([])).toEqual([]);
  });
});
