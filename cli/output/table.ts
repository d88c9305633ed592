// Aligned plain-text tables for the list commands: a header, a rule, one line per row.

import { cellText, displayWidth, escapeCell } from './text-cell.js';

export interface TableColumn<T> {
  readonly header: string;
  readonly value: (row: T) => unknown;
  /** Numbers read best right-aligned; everything else is left-aligned. */
  readonly align?: 'left' | 'right';
}

const pad = (text: string, width: number, align: 'left' | 'right'): string => {
  const fill = ' '.repeat(Math.max(0, width - displayWidth(text)));
  return align === 'right' ? fill + text : text + fill;
};

/** The table as text ending in a newline; lines carry no trailing spaces. */
export function formatTable<T>(columns: readonly TableColumn<T>[], rows: readonly T[]): string {
  const headers = columns.map((c) => escapeCell(c.header));
  const cells = rows.map((row) => columns.map((c) => cellText(c.value(row))));
  const widths = columns.map((_, i) =>
    Math.max(displayWidth(headers[i] ?? ''), ...cells.map((line) => displayWidth(line[i] ?? ''))),
  );
  const render = (line: readonly string[]): string =>
    line
      .map((text, i) => pad(text, widths[i] ?? 0, columns[i]?.align ?? 'left'))
      .join('  ')
      .trimEnd();
  return [render(headers), render(widths.map((w) => '-'.repeat(w))), ...cells.map(render)].join('\n') + '\n';
}
