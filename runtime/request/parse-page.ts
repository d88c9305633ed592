// `page` (from 1) and `page_size` (default 100, at most 1000) → the rows' window; out of range → 400.

import { RestError } from '../../errors/rest-error.js';
import type { RowWindow } from './types.js';

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;
/** Keeps the offset an exact integer on every database. */
const MAX_PAGE = 2_147_483_647;

function parsePositive(name: string, raw: string, max: number): number {
  const n = /^[0-9]{1,10}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(n >= 1 && n <= max)) {
    throw new RestError('invalid_page', `${name} must be an integer from 1 to ${max}`, {
      details: { parameter: name },
    });
  }
  return n;
}

export function parsePage(page: string | undefined, pageSize: string | undefined): RowWindow {
  const number = page === undefined ? 1 : parsePositive('page', page, MAX_PAGE);
  const size =
    pageSize === undefined ? DEFAULT_PAGE_SIZE : parsePositive('page_size', pageSize, MAX_PAGE_SIZE);
  return { limit: size, offset: (number - 1) * size };
}
