import { describe, expect, it } from 'vitest';
import {
  validateColumnRule,
  readableColumns,
  writableColumns,
  type ColumnAccess,
  type ColumnGrant,
  type ReadAccess,
  type WriteAccess,
} from '../../../compiler/columns.js';
import { ANONYMOUS, type AuthUser, type ColumnTypes } from '../../../compiler/types.js';
import { parseColumnRule } from '../../../grammar/column-rule.js';
import { parsePolicy } from '../../../grammar/parse-policy.js';
import { printPolicy } from '../../../grammar/print-policy.js';

const COLUMNS: ColumnTypes = new Map([
  ['id', 'integer'],
  ['user_id', 'integer'],
  ['team_id', 'integer'],
  ['name', 'text'],
  ['email', 'text'],
  ['note', 'text'],
]);

const user = (id: number, is_admin = false, claims: Record<string, unknown> = {}): AuthUser => ({
  id,
  username: `u${id}`,
  is_admin,
  is_authenticated: true,
  claims,
});
const ALICE = user(7, false, { team: 3 });
const ADMIN = user(1, true);

/** [policy id, table_name, expression, columns] */
type Row = readonly [number, string, string, string | null];
const grants = (rows: readonly Row[]): ColumnGrant[] =>
  rows.map(([policyId, tableName, expression, columns]) => ({
    policyId,
    tableName,
    expr: parsePolicy(expression),
    rule: parseColumnRule(columns),
  }));

/** Each column as one short string: `always`, `hidden`, `never`, `masked: <expr> [ids]`, `when: <expr> [ids]`. */
function summary(access: ColumnAccess<ReadAccess | WriteAccess>): Record<string, string> {
  return Object.fromEntries(
    [...access.columns].map(([column, a]) => [
      column,
      a.kind === 'masked' || a.kind === 'when'
        ? `${a.kind}: ${printPolicy(a.when)} [${a.policyIds.join(',')}]`
        : a.kind,
    ]),
  );
}

// The worked example of docs/policy-language.md: email visible to its owner and admins, masked for
// teammates, hidden from everyone else.
const PEOPLE: readonly Row[] = [
  [1, 'people', 'user_id = auth_user.id or auth_user.is_admin', null],
  [2, 'people', 'team_id = auth_user.claims.team', '* except (email, note)'],
  [3, 'people', '', 'id, name'],
];

interface ReadCase {
  readonly name: string;
  readonly rows: readonly Row[];
  readonly user: AuthUser;
  readonly expected: Record<string, string>;
  readonly applying: readonly number[];
}

const READS: readonly ReadCase[] = [
  {
    name: 'no column rule: every column always',
    rows: [[1, 'people', 'user_id = auth_user.id', null]],
    user: ALICE,
    expected: {
      id: 'always',
      user_id: 'always',
      team_id: 'always',
      name: 'always',
      email: 'always',
      note: 'always',
    },
    applying: [1],
  },
  {
    name: 'a list: the rest hidden, the primary key always',
    rows: [[1, 'people', '', 'name']],
    user: ANONYMOUS,
    expected: {
      id: 'always',
      user_id: 'hidden',
      team_id: 'hidden',
      name: 'always',
      email: 'hidden',
      note: 'hidden',
    },
    applying: [1],
  },
  {
    name: 'the example for a non-admin: email masked to the owner, note too, team_id masked to owner and team',
    rows: PEOPLE,
    user: ALICE,
    expected: {
      id: 'always',
      user_id:
        'masked: (user_id = auth_user.id or auth_user.is_admin) or team_id = auth_user.claims.team [1,2]',
      team_id:
        'masked: (user_id = auth_user.id or auth_user.is_admin) or team_id = auth_user.claims.team [1,2]',
      name: 'always',
      email: 'masked: user_id = auth_user.id or auth_user.is_admin [1]',
      note: 'masked: user_id = auth_user.id or auth_user.is_admin [1]',
    },
    applying: [1, 2, 3],
  },
  {
    name: 'the example for an admin: row 1 is TRUE whatever the row, so everything always (row 2 needs a team claim)',
    rows: PEOPLE,
    user: ADMIN,
    expected: {
      id: 'always',
      user_id: 'always',
      team_id: 'always',
      name: 'always',
      email: 'always',
      note: 'always',
    },
    applying: [1, 3],
  },
  {
    name: 'the example for an anonymous caller: rows 1 and 2 cannot be TRUE, so only id and name',
    rows: PEOPLE,
    user: ANONYMOUS,
    expected: {
      id: 'always',
      user_id: 'hidden',
      team_id: 'hidden',
      name: 'always',
      email: 'hidden',
      note: 'hidden',
    },
    applying: [3],
  },
  {
    name: 'an admin-only row does not apply to a non-admin: its columns are hidden',
    rows: [
      [1, 'people', 'auth_user.is_admin', null],
      [2, 'people', 'user_id = auth_user.id', 'name, email'],
    ],
    user: ALICE,
    expected: {
      id: 'always',
      user_id: 'hidden',
      team_id: 'hidden',
      name: 'always',
      email: 'always',
      note: 'hidden',
    },
    applying: [2],
  },
  {
    name: 'two granting rows of three: masked under their OR',
    rows: [
      [1, 'people', 'user_id = auth_user.id', 'note'],
      [2, 'people', 'team_id = 3', 'note'],
      [3, 'people', 'team_id = 4', 'name'],
    ],
    user: ALICE,
    expected: {
      id: 'always',
      user_id: 'hidden',
      team_id: 'hidden',
      name: 'masked: team_id = 4 [3]',
      email: 'hidden',
      note: 'masked: user_id = auth_user.id or team_id = 3 [1,2]',
    },
    applying: [1, 2, 3],
  },
  {
    name: 'a row for every table ignores names the table lacks',
    rows: [[1, 'all', 'user_id = auth_user.id', '* except (password, email)']],
    user: ALICE,
    expected: {
      id: 'always',
      user_id: 'always',
      team_id: 'always',
      name: 'always',
      email: 'hidden',
      note: 'always',
    },
    applying: [1],
  },
];

describe('readableColumns (read / read_mine)', () => {
  it.each(READS)('$name', ({ rows, user, expected, applying }) => {
    const access = readableColumns({ grants: grants(rows), user, columns: COLUMNS, primaryKey: ['id'] });
    expect(summary(access)).toEqual(expected);
    expect(access.applying).toEqual(applying);
    expect(access.unknownColumns).toEqual([]);
  });

  it('a row of the table naming a column it lacks is reported; one for all is not', () => {
    const access = readableColumns({
      grants: grants([
        [1, 'people', '', 'name, gone'],
        [2, 'all', '', '* except (nowhere)'],
        [3, 'people', '', '* except (vanished)'],
      ]),
      user: ALICE,
      columns: COLUMNS,
      primaryKey: ['id'],
    });
    expect(access.unknownColumns).toEqual([
      { policyId: 1, column: 'gone' },
      { policyId: 3, column: 'vanished' },
    ]);
  });

  it('no chosen row: nothing applies and only the primary key is readable', () => {
    const access = readableColumns({ grants: [], user: ALICE, columns: COLUMNS, primaryKey: ['id'] });
    expect(Object.values(summary(access))).toEqual([
      'always',
      'hidden',
      'hidden',
      'hidden',
      'hidden',
      'hidden',
    ]);
  });
});

interface WriteCase {
  readonly name: string;
  readonly rows: readonly Row[];
  readonly user: AuthUser;
  readonly expected: Record<string, string>;
}

const WRITES: readonly WriteCase[] = [
  {
    name: 'owners write name and email of their rows; admins everything',
    rows: [
      [1, 'people', 'user_id = auth_user.id', 'name, email'],
      [2, 'people', 'auth_user.is_admin', null],
    ],
    user: ALICE,
    expected: {
      id: 'never',
      user_id: 'never',
      team_id: 'never',
      name: 'when: user_id = auth_user.id [1]',
      email: 'when: user_id = auth_user.id [1]',
      note: 'never',
    },
  },
  {
    name: 'the same rows for an admin',
    rows: [
      [1, 'people', 'user_id = auth_user.id', 'name, email'],
      [2, 'people', 'auth_user.is_admin', null],
    ],
    user: ADMIN,
    expected: {
      id: 'always',
      user_id: 'always',
      team_id: 'always',
      name: 'always',
      email: 'always',
      note: 'always',
    },
  },
  {
    name: 'protected columns: everything but role and approved, under the owner row',
    rows: [[1, 'people', 'user_id = auth_user.id', '* except (team_id, note)']],
    user: ALICE,
    expected: {
      id: 'when: user_id = auth_user.id [1]',
      user_id: 'when: user_id = auth_user.id [1]',
      team_id: 'never',
      name: 'when: user_id = auth_user.id [1]',
      email: 'when: user_id = auth_user.id [1]',
      note: 'never',
    },
  },
  {
    name: 'two rows granting one column: either may hold',
    rows: [
      [1, 'people', 'user_id = auth_user.id', 'note'],
      [2, 'people', 'team_id = auth_user.claims.team', 'note, name'],
    ],
    user: ALICE,
    expected: {
      id: 'never',
      user_id: 'never',
      team_id: 'never',
      name: 'when: team_id = auth_user.claims.team [2]',
      email: 'never',
      note: 'when: user_id = auth_user.id or team_id = auth_user.claims.team [1,2]',
    },
  },
  {
    name: 'anonymous: an owner row cannot hold, nothing is writable',
    rows: [[1, 'people', 'user_id = auth_user.id', null]],
    user: ANONYMOUS,
    expected: {
      id: 'never',
      user_id: 'never',
      team_id: 'never',
      name: 'never',
      email: 'never',
      note: 'never',
    },
  },
];

describe('writableColumns (create / update)', () => {
  it.each(WRITES)('$name', ({ rows, user, expected }) => {
    const access = writableColumns({ grants: grants(rows), user, columns: COLUMNS, primaryKey: ['id'] });
    expect(summary(access)).toEqual(expected);
  });
});

describe('validateColumnRule: names must exist in the table, except on a row for every table', () => {
  const cases: ReadonlyArray<readonly [string | null, string, string | undefined]> = [
    [null, 'people', undefined],
    ['*', 'people', undefined],
    ['name, email', 'people', undefined],
    ['* except (note)', 'people', undefined],
    ['name, mail', 'people', "column 'mail' does not exist in table 'people' at 1:7"],
    ['* except (\n  "Note")', 'people', "column 'Note' does not exist in table 'people' at 2:3"],
    ['name, mail', 'all', undefined],
    ['name,, mail', 'all', "expected a column name at 1:6, found ','"],
  ];
  it.each(cases)('%j on %s', (text, table, message) => {
    const run = () => validateColumnRule(text, table, table === 'all' ? undefined : COLUMNS);
    if (message === undefined) expect(run).not.toThrow();
    else expect(run).toThrow(message);
  });
});
