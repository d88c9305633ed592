import { describe, expect, it } from 'vitest';
import { dialects } from '../../../../compiler/sql/dialects.js';
import { SqlBuilder, renderSql } from '../../../../compiler/sql/fragment.js';
import { ANONYMOUS, type DialectName } from '../../../../compiler/types.js';

describe('SqlBuilder + renderSql', () => {
  const expected: Record<DialectName, { text: string; values: unknown[] }> = {
    postgres: { text: 'SELECT * FROM "we""ird" WHERE "a" = $1 AND $2::boolean', values: ['x', false] },
    mysql: { text: 'SELECT * FROM `we"ird` WHERE `a` = ? AND ?', values: ['x', false] },
    sqlite: { text: 'SELECT * FROM "we""ird" WHERE "a" = ? AND ?', values: ['x', 0] },
  };
  it.each(Object.keys(expected) as DialectName[])(
    '%s numbers placeholders and quotes identifiers',
    (name) => {
      const b = new SqlBuilder(dialects[name]);
      b.append('SELECT * FROM ').appendIdent('we"ird').append(' WHERE ').appendIdent('a').append(' = ');
      b.appendValue('x').append(' AND ').appendAuth({ kind: 'is_admin' }, 'boolean');
      expect(renderSql(dialects[name], b.build(), ANONYMOUS)).toEqual(expected[name]);
    },
  );

  it('refuses to render an auth slot without a user', () => {
    const f = new SqlBuilder(dialects.postgres).appendAuth({ kind: 'id' }).build();
    expect(() => renderSql(dialects.postgres, f)).toThrow(/auth slot/);
  });
});
