import { describe, expect, it } from 'vitest';
import { dialects } from '../../../../compiler/sql/dialects.js';
import { SqlBuilder, renderSql } from '../../../../compiler/sql/fragment.js';
import { globPattern } from '../../../../compiler/sql/sqlite-dialect.js';
import { likePattern } from '../../../../compiler/sql/standard-sql.js';
import type { DialectName } from '../../../../compiler/types.js';

describe('dialect hooks', () => {
  it('like patterns: * is the wildcard, % _ ! are literal', () => {
    expect(likePattern('50%_off*!')).toBe('50!%!_off%!!');
    expect(globPattern('a?b[c]*')).toBe('a[?]b[[]c]*');
  });

  const like: Record<DialectName, string> = {
    postgres: `"t" LIKE $1 ESCAPE '!' / "t" ILIKE $2 ESCAPE '!'`,
    mysql:
      "CAST(`t` AS BINARY) LIKE CAST(? AS BINARY) ESCAPE '!' / CAST(LOWER(`t`) AS BINARY) LIKE CAST(LOWER(?) AS BINARY) ESCAPE '!'",
    sqlite: `"t" GLOB ? / "t" LIKE ? ESCAPE '!'`,
  };
  it.each(Object.keys(like) as DialectName[])('%s writes like and ilike through the builder', (name) => {
    const d = dialects[name];
    const b = new SqlBuilder(d);
    d.like(b, 't', 'a*');
    b.append(' / ');
    d.ilike(b, 't', 'a*');
    expect(renderSql(d, b.build()).text).toBe(like[name]);
  });

  it.each([
    ['2024-01-02T03:04:05.5+01:00', '2024-01-02 02:04:05.5'],
    ['2024-01-02T03:04:05Z', '2024-01-02 03:04:05'],
    ['2024-01-02 03:04', '2024-01-02 03:04'],
    ['2024-01-02', '2024-01-02'],
  ])('MySQL binds timestamp %s as %s (DATETIME takes no zone)', (text, bound) => {
    expect(dialects.mysql.bindTimestamp(text)).toBe(bound);
    expect(dialects.postgres.bindTimestamp(text)).toBe(text);
  });
});
