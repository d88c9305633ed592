// The documentation's table of error codes (docs/http-api.md), rendered from the registry
// (errors/error-codes.ts) and written between two markers by `npm run docs:errors`; test/unit/errors/
// fails when the page's copy differs.

import { categoriesOf, ERROR_CODES, type ErrorCode } from './error-codes.js';
import { exitCodeOf, httpStatusOf } from './rest-error.js';

export const ERROR_TABLE_START =
  '<!-- error-table: generated from errors/error-codes.ts by `npm run docs:errors` -->';
export const ERROR_TABLE_END = '<!-- /error-table -->';

const distinct = (values: readonly number[]): string =>
  [...new Set(values)].sort((a, b) => a - b).join(' / ');

/** A pipe would end the cell, even inside a code span (GitHub-flavoured Markdown). */
const cell = (text: string): string => text.replaceAll('|', '\\|');

/** One row per code, in the registry's order: code · HTTP status · exit code · meaning. */
export function renderErrorTable(): string {
  const rows = (Object.keys(ERROR_CODES) as ErrorCode[]).map((code) => {
    const categories = categoriesOf(code);
    const statuses = distinct(categories.map((c) => httpStatusOf[c]));
    const exitCodes = distinct(categories.map((c) => exitCodeOf[c]));
    return `| \`${code}\` | ${statuses} | ${exitCodes} | ${cell(ERROR_CODES[code].meaning)} |`;
  });
  return ['| code | HTTP status | exit code | meaning |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

/** `page` with what lies between the markers replaced by `table`; throws without both markers. */
export function withErrorTable(page: string, table: string): string {
  const start = page.indexOf(ERROR_TABLE_START);
  const end = page.indexOf(ERROR_TABLE_END);
  if (start < 0 || end < start) {
    throw new Error(`docs/http-api.md has no "${ERROR_TABLE_START}" … "${ERROR_TABLE_END}" markers`);
  }
  return `${page.slice(0, start + ERROR_TABLE_START.length)}\n${table}\n${page.slice(end)}`;
}
