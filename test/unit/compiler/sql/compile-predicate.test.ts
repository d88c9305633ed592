import { describe, expect, it } from 'vitest';
import type { ColumnTypes } from '../../../../compiler/types.js';
import { SESSION_BINDING } from '../../../../compiler/rls/session-settings.js';
import { compileToSql } from '../../../../compiler/sql/compile-predicate.js';
import { dialects } from '../../../../compiler/sql/dialects.js';
import { postgresDialect } from '../../../../compiler/sql/postgres-dialect.js';
import { renderInlinePostgres, renderSql, type RenderedSql } from '../../../../compiler/sql/fragment.js';
import type { AuthUser, DialectName } from '../../../../compiler/types.js';
import { parsePolicy } from '../../../../grammar/parse-policy.js';

const COLUMNS: ColumnTypes = new Map([
  ['id', 'integer'],
  ['user_id', 'integer'],
  ['org', 'text'],
  ['score', 'decimal'],
  ['flag', 'boolean'],
  ['name', 'text'],
] as const);
const USER: AuthUser = {
  id: 7,
  username: 'alice',
  is_admin: false,
  is_authenticated: true,
  claims: { org: 'acme', n: '3', ok: true },
};

const claim = (name: string, body: string): string =>
  `(select ${body} from (select nullif(current_setting('rest.claims', true), '')::jsonb -> '${name}' as c) as claim)`;
const CLAIM_TEXT = "case when jsonb_typeof(c) = 'string' then c #>> '{}' end";
const CLAIM_BOOLEAN = "case when jsonb_typeof(c) = 'boolean' then c::boolean end";
const CLAIM_NUMBER =
  "case jsonb_typeof(c) when 'number' then c::numeric when 'string' then case when (c #>> '{}') ~ " +
  "'^-?(?=(?:[0-9][.]?){1,15}$)[0-9]+(?:[.][0-9]+)?$' then (c #>> '{}')::numeric end end";

interface Case {
  readonly policy: string;
  readonly portable: Readonly<Record<DialectName, RenderedSql>>;
  /** PostgreSQL RLS: auth_user from the rest.* settings, literals inlined. */
  readonly native: string;
}

const cases: readonly Case[] = [
  {
    policy: '',
    portable: {
      postgres: { text: 'true', values: [] },
      mysql: { text: 'TRUE', values: [] },
      sqlite: { text: '1', values: [] },
    },
    native: 'true',
  },
  {
    policy: 'auth_user.is_authenticated',
    portable: {
      postgres: { text: '$1::boolean', values: [true] },
      mysql: { text: '?', values: [true] },
      sqlite: { text: '?', values: [1] },
    },
    native: "(select coalesce(nullif(current_setting('rest.is_authenticated', true), '')::boolean, false))",
  },
  {
    policy: 'auth_user.is_admin',
    portable: {
      postgres: { text: '$1::boolean', values: [false] },
      mysql: { text: '?', values: [false] },
      sqlite: { text: '?', values: [0] },
    },
    native: "(select coalesce(nullif(current_setting('rest.is_admin', true), '')::boolean, false))",
  },
  {
    policy: 'user_id = auth_user.id',
    portable: {
      postgres: { text: '("user_id" = $1::bigint)', values: [7] },
      mysql: { text: '(`user_id` = ?)', values: [7] },
      sqlite: { text: '("user_id" = ?)', values: [7] },
    },
    native: `("user_id" = (select nullif(current_setting('rest.user_id', true), '')::bigint))`,
  },
  {
    policy: 'org = auth_user.claims.org and not flag',
    portable: {
      postgres: {
        text: '((("org") COLLATE "C" = ($1::text) COLLATE "C") AND (NOT "flag"))',
        values: ['acme'],
      },
      mysql: { text: '((CAST(`org` AS BINARY) = CAST(? AS BINARY)) AND (NOT `flag`))', values: ['acme'] },
      sqlite: { text: '(("org" = ?) AND (NOT "flag"))', values: ['acme'] },
    },
    native: `((("org") COLLATE "C" = (${claim('org', CLAIM_TEXT)}) COLLATE "C") AND (NOT "flag"))`,
  },
  {
    policy: "name < 'b' or score >= 1.5 or id in (1, 2, null)",
    portable: {
      postgres: {
        text: '((("name") COLLATE "C" < ($1::text) COLLATE "C") OR ("score" >= $2::numeric) OR ("id" IN ($3::bigint, $4::bigint, NULL)))',
        values: ['b', 1.5, 1, 2],
      },
      mysql: {
        text: '((CAST(`name` AS BINARY) < CAST(? AS BINARY)) OR (`score` >= ?) OR (`id` IN (?, ?, NULL)))',
        values: ['b', 1.5, 1, 2],
      },
      sqlite: {
        text: '(("name" < ?) OR ("score" >= ?) OR ("id" IN (?, ?, NULL)))',
        values: ['b', 1.5, 1, 2],
      },
    },
    native: `((("name") COLLATE "C" < ('b'::text) COLLATE "C") OR ("score" >= 1.5::numeric) OR ("id" IN (1::bigint, 2::bigint, NULL)))`,
  },
  {
    policy: 'auth_user.claims.ok or auth_user.claims.n <> user_id',
    portable: {
      postgres: { text: '($1::boolean OR ($2::numeric <> "user_id"))', values: [true, 3] },
      mysql: { text: '(? OR (? <> `user_id`))', values: [true, 3] },
      sqlite: { text: '(? OR (? <> "user_id"))', values: [1, 3] },
    },
    native: `(${claim('ok', CLAIM_BOOLEAN)} OR (${claim('n', CLAIM_NUMBER)} <> "user_id"))`,
  },
  {
    policy: 'auth_user.claims.org is null',
    portable: {
      postgres: { text: '($1::boolean IS NULL)', values: [true] },
      mysql: { text: '(? IS NULL)', values: [true] },
      sqlite: { text: '(? IS NULL)', values: [1] },
    },
    native: `(${claim('org', "case when jsonb_typeof(c) <> 'null' then true end")} IS NULL)`,
  },
  {
    policy: "name = auth_user.username and flag is not null and org != 'x''y\\z'",
    portable: {
      postgres: {
        text: '((("name") COLLATE "C" = ($1::text) COLLATE "C") AND ("flag" IS NOT NULL) AND (("org") COLLATE "C" <> ($2::text) COLLATE "C"))',
        values: ['alice', "x'y\\z"],
      },
      mysql: {
        text: '((CAST(`name` AS BINARY) = CAST(? AS BINARY)) AND (`flag` IS NOT NULL) AND (CAST(`org` AS BINARY) <> CAST(? AS BINARY)))',
        values: ['alice', "x'y\\z"],
      },
      sqlite: {
        text: '(("name" = ?) AND ("flag" IS NOT NULL) AND ("org" <> ?))',
        values: ['alice', "x'y\\z"],
      },
    },
    native:
      `((("name") COLLATE "C" = ((select nullif(current_setting('rest.username', true), '')::jsonb #>> '{}')) COLLATE "C") ` +
      `AND ("flag" IS NOT NULL) AND (("org") COLLATE "C" <> (E'x''y\\\\z'::text) COLLATE "C"))`,
  },
  {
    policy: '"we""ird" = -3',
    portable: {
      postgres: { text: '("we""ird" = $1::bigint)', values: [-3] },
      mysql: { text: '(`we"ird` = ?)', values: [-3] },
      sqlite: { text: '("we""ird" = ?)', values: [-3] },
    },
    native: '("we""ird" = (-3)::bigint)',
  },
];

describe('compileToSql', () => {
  describe.each(cases)('$policy', ({ policy, portable, native }) => {
    it.each(Object.keys(portable) as DialectName[])('%s: portable predicate with bound values', (name) => {
      const fragment = compileToSql(parsePolicy(policy), dialects[name], { columns: COLUMNS });
      expect(renderSql(dialects[name], fragment, USER)).toEqual(portable[name]);
    });
    it('postgres: native predicate reading the session settings', () => {
      const fragment = compileToSql(parsePolicy(policy), postgresDialect, {
        columns: COLUMNS,
        auth: SESSION_BINDING,
      });
      expect(renderInlinePostgres(fragment)).toBe(native);
    });
  });

  it('binds values only: a string literal never becomes SQL text', () => {
    const fragment = compileToSql(parsePolicy("name = '1'')) OR 1=1 --'"), dialects.sqlite, {
      columns: COLUMNS,
    });
    expect(renderSql(dialects.sqlite, fragment, USER)).toEqual({
      text: '("name" = ?)',
      values: ["1')) OR 1=1 --"],
    });
  });

  it('binds an anonymous user as NULLs and false', () => {
    const fragment = compileToSql(
      parsePolicy('user_id = auth_user.id or auth_user.is_admin'),
      dialects.postgres,
      {
        columns: COLUMNS,
      },
    );
    const anonymous: AuthUser = {
      id: null,
      username: null,
      is_admin: false,
      is_authenticated: false,
      claims: {},
    };
    expect(renderSql(dialects.postgres, fragment, anonymous)).toEqual({
      text: '(("user_id" = $1::bigint) OR $2::boolean)',
      values: [null, false],
    });
  });
});
