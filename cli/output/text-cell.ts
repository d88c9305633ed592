// How one value becomes safe, single-line terminal text, and how wide it is on screen.

// C0/C1 controls, zero-width and bidi characters could break a table's lines or reorder what
// the terminal shows (https://trojansource.codes/); they are printed as escapes instead.
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/gu;

const NAMED_ESCAPES: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** One line of printable text; unsafe characters become `\n`, `\t` or `\u{…}`. */
export function escapeCell(text: string): string {
  return text.replace(UNSAFE, (c) => NAMED_ESCAPES[c] ?? `\\u{${(c.codePointAt(0) ?? 0).toString(16)}}`);
}

/** The text of a value in a table: null as `null`, objects as JSON. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return escapeCell(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  return escapeCell(JSON.stringify(value));
}

const ZERO_WIDTH = /^[\p{Mn}\p{Me}\p{Cf}]$/u;
// East Asian Wide and Fullwidth blocks and emoji take two terminal cells
// (https://www.unicode.org/reports/tr11/).
const WIDE_RANGES: readonly (readonly [number, number])[] = [
  [0x1100, 0x115f],
  [0x2e80, 0x303e],
  [0x3041, 0x33ff],
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff],
  [0xa000, 0xa4cf],
  [0xac00, 0xd7a3],
  [0xf900, 0xfaff],
  [0xfe30, 0xfe4f],
  [0xff00, 0xff60],
  [0xffe0, 0xffe6],
  [0x1f300, 0x1f64f],
  [0x1f900, 0x1f9ff],
  [0x20000, 0x3fffd],
];

/** The width of a zero-width or combining character. */
const NO_WIDTH = 0;

const charWidth = (c: string): number => {
  const cp = c.codePointAt(0) ?? 0;
  // Printable ASCII, most of any table: one cell, without building ZERO_WIDTH's Unicode classes
  // (the first test of that expression costs a command's start some milliseconds).
  if (cp >= 0x20 && cp < 0x7f) return 1;
  if (ZERO_WIDTH.test(c)) return NO_WIDTH;
  return WIDE_RANGES.some(([lo, hi]) => cp >= lo && cp <= hi) ? 2 : 1;
};

/** Terminal columns `text` occupies (after escapeCell). */
export function displayWidth(text: string): number {
  let width = 0;
  for (const c of text) width += charWidth(c);
  return width;
}
