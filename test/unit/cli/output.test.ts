import { describe, expect, it } from 'vitest';
import { formatJson } from '../../../cli/output/json.js';
import { formatTable, type TableColumn } from '../../../cli/output/table.js';
import { cellText, displayWidth, escapeCell } from '../../../cli/output/text-cell.js';

interface User {
  readonly id: number;
  readonly username: string;
  readonly is_admin: boolean;
}

const columns: readonly TableColumn<User>[] = [
  { header: 'id', value: (u) => u.id, align: 'right' },
  { header: 'username', value: (u) => u.username },
  { header: 'is_admin', value: (u) => u.is_admin },
];

describe('formatTable', () => {
  it('aligns columns under their headers, numbers to the right, without trailing spaces', () => {
    const text = formatTable(columns, [
      { id: 1, username: 'admin', is_admin: true },
      { id: 12, username: 'bob', is_admin: false },
    ]);
    expect(text).toBe(
      [
        'id  username  is_admin',
        '--  --------  --------',
        ' 1  admin     true',
        '12  bob       false',
        '',
      ].join('\n'),
    );
  });

  it('prints only the header and the rule when there are no rows', () => {
    expect(formatTable(columns, [])).toBe('id  username  is_admin\n--  --------  --------\n');
  });

  it('counts wide characters as two columns and combining marks as none', () => {
    const text = formatTable(columns, [
      { id: 1, username: '日本', is_admin: false },
      { id: 2, username: 'e\u0301abcd', is_admin: false },
    ]);
    const lines = text.split('\n');
    expect(lines[2]).toBe(' 1  日本      false');
    expect(lines[3]).toBe(' 2  e\u0301abcd     false');
  });

  it('keeps one row on one line whatever the data holds', () => {
    const text = formatTable(columns, [{ id: 1, username: 'a\nb\u001b[31m\u202e', is_admin: false }]);
    expect(text.split('\n')).toHaveLength(4);
    expect(text).toContain('a\\nb\\u{1b}[31m\\u{202e}');
  });
});

describe('cell text', () => {
  it.each([
    [null, 'null'],
    [true, 'true'],
    [3.5, '3.5'],
    ['', ''],
    [{ a: 1 }, '{"a":1}'],
    ['tab\there', 'tab\\there'],
  ] as const)('%j prints as %s', (value, text) => {
    expect(cellText(value)).toBe(text);
  });

  it('escapes zero-width and bidi characters', () => {
    expect(escapeCell('a\u200bb\u2066')).toBe('a\\u{200b}b\\u{2066}');
  });

  it('measures display width in terminal cells', () => {
    expect(displayWidth('abc')).toBe(3);
    expect(displayWidth('한국')).toBe(4);
    expect(displayWidth('🎉')).toBe(2);
  });
});

describe('formatJson', () => {
  it('prints one indented document ending in a newline', () => {
    expect(formatJson([{ id: 1 }])).toBe('[\n  {\n    "id": 1\n  }\n]\n');
  });
});
