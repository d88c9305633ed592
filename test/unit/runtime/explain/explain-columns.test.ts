// explainColumns: the worked example of docs/policy-language.md "Columns" — a profile's email
// readable by its owner and admins, masked for teammates, and the caller's write rules — as the
// data `policy explain` and the console show.

import { describe, expect, it } from 'vitest';
import { compilePolicySet } from '../../../../compiler/policy-set.js';
import { sqliteDialect } from '../../../../compiler/sql/sqlite-dialect.js';
import { ANONYMOUS, type AuthUser, type PolicyRow } from '../../../../compiler/types.js';
import { explainColumns } from '../../../../runtime/explain/explain-columns.js';
import { fakeTable } from '../../../support/fake-schema.js';

const profiles = fakeTable('profiles', {
  id: 'integer',
  user_id: 'integer',
  team_id: 'integer',
  name: 'text',
  email: 'text',
});
const users = fakeTable('auth_users', {
  id: 'integer',
  username: 'text',
  password: 'text',
  is_admin: 'boolean',
});
const schema = { tables: new Map([profiles, users].map((t) => [t.name, t])) };

const row = (
  id: number,
  table_name: string,
  action: string,
  expression: string,
  columns: string | null,
): PolicyRow => ({
  id,
  table_name,
  action,
  expression,
  description: '',
  columns,
});
const ROWS: readonly PolicyRow[] = [
  row(1, 'auth_users', 'all', 'auth_user.is_admin', null),
  row(4, 'profiles', 'read', 'auth_user.is_admin', null),
  row(5, 'profiles', 'read', 'user_id = auth_user.id', null),
  row(6, 'profiles', 'read', 'team_id = auth_user.claims.team_id', 'id, user_id, team_id, name'),
  row(7, 'profiles', 'update', 'user_id = auth_user.id', 'name, email'),
];
const set = compilePolicySet(ROWS, sqliteDialect);

const user = (id: number, claims: Record<string, unknown> = {}, is_admin = false): AuthUser => ({
  id,
  username: `u${id}`,
  is_admin,
  is_authenticated: true,
  claims: { user_id: id, is_admin, ...claims },
});

describe('explainColumns', () => {
  it('a teammate reads email only where it is their own row, and writes name and email on their own rows', () => {
    const c = explainColumns(set, profiles, schema, user(2, { team_id: 1 }));
    expect(c.read).toEqual({
      denied: false,
      readable: ['id', 'user_id', 'team_id', 'name'],
      masked: [{ column: 'email', when: 'user_id = auth_user.id', policy_ids: [5] }],
      hidden: [],
    });
    expect(c.update).toEqual({
      denied: false,
      writable: [],
      conditional: [
        { column: 'name', when: 'user_id = auth_user.id', policy_ids: [7] },
        { column: 'email', when: 'user_id = auth_user.id', policy_ids: [7] },
      ],
      protected: ['id', 'user_id', 'team_id'],
    });
    // No create row for profiles: the level falls back to `all`, which has none here.
    expect(c.create).toEqual({
      denied: true,
      writable: [],
      conditional: [],
      protected: ['id', 'user_id', 'team_id', 'name', 'email'],
    });
  });

  it('an admin reads every column; a user in no team reads every column of the rows they see', () => {
    expect(explainColumns(set, profiles, schema, user(1, {}, true)).read).toMatchObject({
      readable: ['id', 'user_id', 'team_id', 'name', 'email'],
      masked: [],
      hidden: [],
    });
    expect(explainColumns(set, profiles, schema, user(3)).read).toMatchObject({
      readable: ['id', 'user_id', 'team_id', 'name', 'email'],
      masked: [],
    });
  });

  it('anonymous is denied the read; secret columns are never listed', () => {
    expect(explainColumns(set, profiles, schema, ANONYMOUS).read).toMatchObject({
      denied: true,
      readable: [],
    });
    const admin = explainColumns(set, users, schema, user(1, {}, true));
    expect(admin.read.readable).toEqual(['id', 'username', 'is_admin']);
    expect(admin.update.writable).toEqual(['id', 'username', 'is_admin']);
  });
});
