// The error table of docs/http-api.md is the one rendered from the registry. `npm run docs:errors`
// runs this file with REST_WRITE_ERROR_TABLE=1, which rewrites the page's table instead of failing.

import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../../errors/error-codes.js';
import {
  ERROR_TABLE_END,
  ERROR_TABLE_START,
  renderErrorTable,
  withErrorTable,
} from '../../../errors/error-table.js';

const PAGE = fileURLToPath(new URL('../../../docs/http-api.md', import.meta.url));

const rowOf = (table: string, code: string): string | undefined =>
  table.split('\n').find((line) => line.startsWith(`| \`${code}\` |`));

describe('the error table', () => {
  const table = renderErrorTable();

  it('has a row per registered code: code, HTTP status, exit code, meaning', () => {
    expect(table.split('\n')).toHaveLength(2 + Object.keys(ERROR_CODES).length);
    expect(rowOf(table, 'unique_violation')).toBe(
      '| `unique_violation` | 409 | 2 | a row with the same unique value already exists |',
    );
    expect(rowOf(table, 'usage')).toMatch(/^\| `usage` \| 400 \| 1 \| /);
  });

  it('shows every status and exit code of a code given with several categories', () => {
    expect(rowOf(table, 'policy_check_failed')).toMatch(/^\| `policy_check_failed` \| 401 \/ 403 \| 2 \| /);
  });

  it('escapes the pipes of a meaning', () => {
    expect(rowOf(table, 'invalid_order')).toContain('`column[.asc\\|.desc][.nullsfirst\\|.nullslast]`');
  });

  it('replaces only what lies between the markers', () => {
    const text = `# A\n\n${ERROR_TABLE_START}\nold\n${ERROR_TABLE_END}\n\n# B\n`;
    expect(withErrorTable(text, 'new')).toBe(`# A\n\n${ERROR_TABLE_START}\nnew\n${ERROR_TABLE_END}\n\n# B\n`);
    expect(() => withErrorTable('# A\n', 'new')).toThrow(/markers/);
  });

  it('is the table of docs/http-api.md', () => {
    const page = readFileSync(PAGE, 'utf8');
    const updated = withErrorTable(page, table);
    if (process.env['REST_WRITE_ERROR_TABLE'] === '1') {
      if (updated !== page) writeFileSync(PAGE, updated);
      return;
    }
    const inPage = page.slice(
      page.indexOf(ERROR_TABLE_START) + ERROR_TABLE_START.length,
      page.indexOf(ERROR_TABLE_END),
    );
    expect(
      inPage.trim(),
      'the error table of docs/http-api.md differs from errors/error-codes.ts: run `npm run docs:errors` to rewrite it',
    ).toBe(table);
  });
});
