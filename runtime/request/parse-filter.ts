// One query parameter `<column>=<op>.<value>` → a Filter (PostgREST's horizontal filtering).

import { RestError } from '../../errors/rest-error.js';
import { COMPARISON_OPS, type ColumnFilter, type ComparisonOp, type IsValue } from './types.js';

const isComparison = (op: string): op is ComparisonOp => (COMPARISON_OPS as readonly string[]).includes(op);

function invalidFilter(column: string, message: string): RestError {
  return new RestError('invalid_filter', message, { details: { column } });
}

/**
 * `in.(a,b,"c,d")`: items are separated by commas; an item in double quotes may contain commas,
 * parentheses and quotes escaped with a backslash (PostgREST's reserved-character rule).
 */
export function parseInList(column: string, text: string): readonly string[] {
  if (!text.startsWith('(') || !text.endsWith(')')) {
    throw invalidFilter(
      column,
      `the value of in for ${column} must be a list in parentheses, like in.(1,2,3)`,
    );
  }
  const body = text.slice(1, -1);
  if (body === '') return [];
  const items: string[] = [];
  let i = 0;
  while (i <= body.length) {
    if (body[i] === '"') {
      let item = '';
      i += 1;
      while (i < body.length && body[i] !== '"') {
        if (body[i] === '\\' && i + 1 < body.length) i += 1;
        item += body[i];
        i += 1;
      }
      if (i >= body.length)
        throw invalidFilter(column, `unterminated quoted value in the in list of ${column}`);
      i += 1;
      if (i < body.length && body[i] !== ',') {
        throw invalidFilter(column, `expected a comma after a quoted value in the in list of ${column}`);
      }
      items.push(item);
      i += 1;
    } else {
      const end = body.indexOf(',', i);
      const stop = end === -1 ? body.length : end;
      items.push(body.slice(i, stop));
      i = stop + 1;
    }
  }
  return items;
}

const IS_VALUES: readonly IsValue[] = ['null', 'true', 'false'];

export function parseFilter(column: string, raw: string): ColumnFilter {
  if (column === '') throw invalidFilter(column, 'a filter needs a column name before =');
  const dot = raw.indexOf('.');
  if (dot === -1) {
    throw invalidFilter(
      column,
      `the filter on ${column} must look like <operator>.<value>, for example eq.5`,
    );
  }
  const op = raw.slice(0, dot);
  const value = raw.slice(dot + 1);
  if (isComparison(op)) return { kind: 'compare', column, op, value };
  switch (op) {
    case 'like':
    case 'ilike':
      return { kind: 'pattern', column, op, pattern: value };
    case 'in':
      return { kind: 'in', column, values: parseInList(column, value) };
    case 'is': {
      const lowered = value.toLowerCase();
      const found = IS_VALUES.find((v) => v === lowered);
      if (found === undefined)
        throw invalidFilter(column, `is accepts null, true or false (column ${column})`);
      return { kind: 'is', column, value: found };
    }
    default:
      throw invalidFilter(
        column,
        `unknown operator "${op.slice(0, 32)}" on ${column}; use eq, neq, gt, gte, lt, lte, like, ilike, in or is`,
      );
  }
}
