// `select=a,b` → the column names to return (`*` or absent: every column).

import { RestError } from '../../errors/rest-error.js';
import type { Select } from './types.js';

export function parseSelect(raw: string | undefined): Select {
  if (raw === undefined || raw.trim() === '*') return undefined;
  const names = raw.split(',').map((s) => s.trim());
  if (names.some((n) => n === '' || n === '*')) {
    throw new RestError(
      'invalid_select',
      'select must be a comma-separated list of column names, like select=id,title',
    );
  }
  return [...new Set(names)];
}
