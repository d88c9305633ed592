// `order=a.asc,b.desc.nullsfirst` → order items; the column is what remains after the modifiers.

import { RestError } from '../../errors/rest-error.js';
import type { OrderItem } from './types.js';

const invalidOrder = (): RestError =>
  new RestError(
    'invalid_order',
    'order must be a comma-separated list of column[.asc|.desc][.nullsfirst|.nullslast], like order=title.asc,id.desc',
  );

function parseItem(item: string): OrderItem {
  const parts = item.trim().split('.');
  let nulls: 'first' | 'last' | undefined;
  let direction: 'asc' | 'desc' = 'asc';
  const last = parts[parts.length - 1];
  if (last === 'nullsfirst' || last === 'nullslast') {
    nulls = last === 'nullsfirst' ? 'first' : 'last';
    parts.pop();
  }
  const dir = parts[parts.length - 1];
  if (dir === 'asc' || dir === 'desc') {
    direction = dir;
    parts.pop();
  }
  const column = parts.join('.');
  if (column === '') throw invalidOrder();
  return nulls === undefined ? { column, direction } : { column, direction, nulls };
}

export function parseOrder(raw: string | undefined): readonly OrderItem[] {
  if (raw === undefined) return [];
  return raw.split(',').map(parseItem);
}
