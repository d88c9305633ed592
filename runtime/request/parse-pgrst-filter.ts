// The PostgREST dialect's conditions (docs/postgrest.md): `col=[not.]<op>.<value>` and the logic
// trees `or=(…)`, `and=(…)`, `not.or=(…)` with nested `and(…)`, `or(…)`, `not.and(…)`. Pure: names
// are checked against the schema in plan/, and every value stays a value.

import { RestError } from '../../errors/rest-error.js';
import { parseInList } from './parse-filter.js';
import { COMPARISON_OPS, type ColumnFilter, type ComparisonOp, type Filter, type IsValue } from './types.js';

const isComparison = (op: string): op is ComparisonOp => (COMPARISON_OPS as readonly string[]).includes(op);

/** Operators PostgREST has and this version does not serve: a 400 that says so, never a misparse. */
const UNSUPPORTED_OPERATORS: Readonly<Record<string, string>> = {
  fts: 'full-text search',
  plfts: 'full-text search',
  phfts: 'full-text search',
  wfts: 'full-text search',
  match: 'regular expressions',
  imatch: 'regular expressions',
  cs: 'array and range operators',
  cd: 'array and range operators',
  ov: 'array and range operators',
  sl: 'array and range operators',
  sr: 'array and range operators',
  nxr: 'array and range operators',
  nxl: 'array and range operators',
  adj: 'array and range operators',
};

export function unsupportedFeature(what: string, parameter?: string): RestError {
  return new RestError('unsupported_feature', `${what} is not supported by this version of rest`, {
    ...(parameter === undefined ? {} : { details: { parameter } }),
  });
}

function invalidFilter(column: string, message: string): RestError {
  return new RestError('invalid_filter', message, { details: { column } });
}

/** A column name of a filter: JSON paths, casts and embedded resources are refused by name. */
export function checkColumnName(column: string, parameter: string): string {
  if (column === '') throw invalidFilter(column, 'a filter needs a column name');
  if (column.includes('->')) throw unsupportedFeature('filtering on a JSON path', parameter);
  if (column.includes('::')) throw unsupportedFeature('casting a column', parameter);
  if (column.includes('.')) throw unsupportedFeature('filtering an embedded resource', parameter);
  return column;
}

const IS_VALUES: readonly IsValue[] = ['null', 'true', 'false'];

/** `{a,b,"c,d"}` → its items (the set of like(any)/like(all)). */
function parseBraceList(column: string, text: string): readonly string[] {
  if (!text.startsWith('{') || !text.endsWith('}')) {
    throw invalidFilter(column, `the patterns of ${column} must be a set in braces, like like(any).{a*,*b}`);
  }
  return parseInList(column, `(${text.slice(1, -1)})`);
}

/** `%` and `*` are both wildcards in this dialect; a ColumnFilter pattern knows only `*`. */
const starPattern = (pattern: string): string => pattern.replaceAll('%', '*');

/** `[not.]<op>.<value>` for `column` → its condition. */
export function parseCondition(column: string, raw: string): Filter {
  if (raw.startsWith('not.')) return { kind: 'not', filter: parseCondition(column, raw.slice(4)) };
  const dot = raw.indexOf('.');
  if (dot === -1) {
    throw invalidFilter(
      column,
      `the filter on ${column} must look like [not.]<operator>.<value>, for example eq.5`,
    );
  }
  return columnCondition(column, raw.slice(0, dot), raw.slice(dot + 1));
}

function columnCondition(column: string, op: string, value: string): ColumnFilter {
  if (isComparison(op)) return { kind: 'compare', column, op, value };
  const quantified = /^(like|ilike)\((any|all)\)$/.exec(op);
  if (quantified !== null) {
    const patternOp = quantified[1] === 'like' ? 'like' : 'ilike';
    const quantifier = quantified[2] === 'any' ? 'any' : 'all';
    const patterns = parseBraceList(column, value).map(starPattern);
    return { kind: 'patterns', column, op: patternOp, quantifier, patterns };
  }
  switch (op) {
    case 'like':
    case 'ilike':
      return { kind: 'pattern', column, op, pattern: starPattern(value) };
    case 'in':
      return { kind: 'in', column, values: parseInList(column, value) };
    case 'isdistinct':
      return { kind: 'distinct', column, value };
    case 'is': {
      const found = IS_VALUES.find((v) => v === value.toLowerCase());
      if (found === undefined)
        throw invalidFilter(column, `is accepts null, true or false (column ${column})`);
      return { kind: 'is', column, value: found };
    }
    default: {
      const feature = UNSUPPORTED_OPERATORS[op.replace(/\(.*$/, '')];
      if (feature !== undefined) throw unsupportedFeature(`${feature} (operator ${op})`, column);
      throw invalidFilter(
        column,
        `unknown operator "${op.slice(0, 32)}" on ${column}; use eq, neq, gt, gte, lt, lte, like, ilike, in, is, isdistinct, like(any|all), ilike(any|all), optionally after not.`,
      );
    }
  }
}

/**
 * `text` split at its top-level commas: commas inside parentheses, braces or a double-quoted item
 * (with `\` escapes) stay in their item.
 */
function splitTopLevel(text: string, parameter: string): readonly string[] {
  const items: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (quoted) {
      if (c === '\\') i += 1;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === '(' || c === '{') depth += 1;
    else if (c === ')' || c === '}') {
      depth -= 1;
      if (depth < 0) throw invalidLogic(parameter, 'a closing parenthesis has no opening one');
    } else if (c === ',' && depth === 0) {
      items.push(text.slice(start, i));
      start = i + 1;
    }
  }
  if (quoted) throw invalidLogic(parameter, 'a double-quoted value is not closed');
  if (depth !== 0) throw invalidLogic(parameter, 'a parenthesis is not closed');
  items.push(text.slice(start));
  return items;
}

function invalidLogic(parameter: string, why: string): RestError {
  return new RestError('invalid_filter', `the logic tree in ${parameter} cannot be read: ${why}`, {
    details: { parameter },
  });
}

/** `"a,b"` → `a,b` (with `\` escapes); anything else as it is. */
function unquote(value: string): string {
  if (value.length < 2 || !value.startsWith('"') || !value.endsWith('"')) return value;
  return value.slice(1, -1).replace(/\\(.)/g, '$1');
}

const MAX_DEPTH = 16;

/** `(item,item,…)` → the items as conditions, joined by `op`. */
export function parseLogic(op: 'and' | 'or', text: string, parameter: string, depth = 0): Filter {
  if (depth > MAX_DEPTH) throw invalidLogic(parameter, `it nests deeper than ${MAX_DEPTH} levels`);
  if (!text.startsWith('(') || !text.endsWith(')')) {
    throw invalidLogic(parameter, `its value must be a list in parentheses, like ${op}=(a.eq.1,b.gt.2)`);
  }
  const items = splitTopLevel(text.slice(1, -1), parameter).map((item) =>
    parseLogicItem(item.trim(), parameter, depth),
  );
  return { kind: 'logic', op, items };
}

function parseLogicItem(item: string, parameter: string, depth: number): Filter {
  if (item === '') throw invalidLogic(parameter, 'it has an empty item');
  const nested = /^(not\.)?(and|or)\(/.exec(item);
  if (nested !== null) {
    const tree = parseLogic(
      nested[2] === 'and' ? 'and' : 'or',
      item.slice(nested[0].length - 1),
      parameter,
      depth + 1,
    );
    return nested[1] === undefined ? tree : { kind: 'not', filter: tree };
  }
  const dot = item.indexOf('.');
  if (dot === -1) throw invalidLogic(parameter, `"${item.slice(0, 32)}" is not <column>.<operator>.<value>`);
  const column = checkColumnName(item.slice(0, dot), parameter);
  const condition = parseCondition(column, item.slice(dot + 1));
  return unquoteValues(condition);
}

/** Inside a logic tree a value may be double-quoted to hold commas and parentheses. */
function unquoteValues(filter: Filter): Filter {
  switch (filter.kind) {
    case 'not':
      return { kind: 'not', filter: unquoteValues(filter.filter) };
    case 'compare':
    case 'distinct':
      return { ...filter, value: unquote(filter.value) };
    case 'pattern':
      return { ...filter, pattern: unquote(filter.pattern) };
    default:
      return filter;
  }
}
