// Validates request values against the column's kind, identically on every database, so a type
// error is a 400 before any SQL runs (SQLite would otherwise store anything).

import { RestError } from '../../errors/rest-error.js';
import type { ColumnInfo } from '../db/adapter.js';
import type { JsonValue } from '../request/types.js';
import type { ValueKind } from '../db/value-kind.js';

const INTEGER = /^[+-]?[0-9]+$/;
const DECIMAL = /^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$/;
const DATE = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/;
const TIMESTAMP =
  /^[0-9]{4}-[0-9]{2}-[0-9]{2}([T ][0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,9})?)?)?(Z|[+-][0-9]{2}(:?[0-9]{2})?)?$/i;
const TIME = /^[0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,9})?)?$/;

const expected: Readonly<Record<ValueKind, string>> = {
  integer: 'an integer',
  decimal: 'a number',
  boolean: 'true or false',
  text: 'a string',
  json: 'a JSON value',
  date: 'a date (YYYY-MM-DD)',
  timestamp: 'an ISO-8601 timestamp',
  time: 'a time (HH:MM[:SS])',
  other: 'a string',
};

export function invalidValue(column: ColumnInfo, kind: ValueKind = column.valueKind): RestError {
  return new RestError('invalid_value', `${column.name} must be ${expected[kind]}`, {
    details: { column: column.name },
  });
}

/**
 * NUL and lone UTF-16 surrogates, refused in every text value a request sends (docs/http-api.md), so one
 * rule holds on every database: PostgreSQL cannot store NUL in text or jsonb; a lone surrogate is
 * not Unicode text, and PostgreSQL and MariaDB would store it as U+FFFD while better-sqlite3
 * writes the invalid bytes into the file. With the `u` flag a lone surrogate is one code point
 * of category Cs (a valid pair is one astral code point).
 */
const LONE_SURROGATE = /\p{Cs}/u;
const isBadText = (text: string): boolean => text.includes('\u0000') || LONE_SURROGATE.test(text);

function badText(column: ColumnInfo): RestError {
  return new RestError(
    'invalid_value',
    `${column.name} must be text without NUL characters or lone UTF-16 surrogates`,
    { details: { column: column.name } },
  );
}

/** Whether any string of a JSON value, object keys included, holds NUL or a lone surrogate. */
function hasBadText(value: JsonValue): boolean {
  if (typeof value === 'string') return isBadText(value);
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) return (value as readonly JsonValue[]).some(hasBadText);
  return Object.entries(value).some(([key, v]) => isBadText(key) || hasBadText(v));
}

function outOfRange(column: ColumnInfo): RestError {
  return new RestError('invalid_value', `${column.name} is out of range for its type ${column.dbType}`, {
    details: { column: column.name },
  });
}

function isValidDate(text: string): boolean {
  const m = DATE.exec(text);
  if (m === null) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

const isValidTimestamp = (text: string): boolean =>
  TIMESTAMP.test(text) && isValidDate(text.slice(0, 10)) && !Number.isNaN(Date.parse(text.replace(' ', 'T')));

/** Integers beyond 2^53 stay strings so no digit is lost on the way to the database. */
function integerFromText(text: string): number | string {
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : text.replace(/^\+/, '');
}

const INTEGER_BITS: ReadonlyArray<readonly [RegExp, number]> = [
  [/^tinyint\b/, 8],
  [/^(smallint|int2)\b/, 16],
  [/^mediumint\b/, 24],
];

/**
 * The range of an integer column from its declared type. SQLite enforces none (its INTEGER is
 * 64-bit), so ranges are checked here for every database: smallint, tinyint and mediumint by
 * their size, everything else as 64-bit (PostgreSQL and MySQL also refuse a 32-bit overflow).
 */
function integerFits(column: ColumnInfo, value: number | string): boolean {
  const bits = INTEGER_BITS.find(([re]) => re.test(column.dbType))?.[1] ?? 64;
  const unsigned = /\bunsigned\b/.test(column.dbType);
  const n = BigInt(value);
  const min = unsigned ? 0n : -(2n ** BigInt(bits - 1));
  const max = unsigned ? 2n ** BigInt(bits) - 1n : 2n ** BigInt(bits - 1) - 1n;
  return n >= min && n <= max;
}

/** `numeric(p,s)` / `decimal(p,s)` holds fewer than 10^(p-s); SQLite would store anything. */
function decimalFits(column: ColumnInfo, value: number | string): boolean {
  const m = /^(?:numeric|decimal)\(([0-9]+)(?:,\s*([0-9]+))?\)/.exec(column.dbType);
  if (m === null) return true;
  const integerDigits = Number(m[1]) - Number(m[2] ?? 0);
  return Math.abs(Number(value)) < 10 ** integerDigits;
}

/**
 * The declared length of a `varchar(n)` / `char(n)` / `character varying(n)` column, in characters;
 * undefined for text without one.
 */
function declaredLength(column: ColumnInfo): number | undefined {
  const m = /^n?(?:var)?char(?:acter)?(?: varying)?\s*\(\s*([0-9]+)\s*\)/.exec(column.dbType);
  return m === null ? undefined : Number(m[1]);
}

/**
 * Whether a text fits its column's declared length, counted in code points as PostgreSQL and
 * MySQL/MariaDB (utf8mb4) count characters. SQLite stores any length: the rule is checked here for
 * every database, so one value is 400 on all three.
 */
function fitsLength(column: ColumnInfo, text: string): boolean {
  const max = declaredLength(column);
  if (max === undefined || text.length <= max) return true;
  let count = 0;
  for (const _ of text) if (++count > max) return false;
  return true;
}

/**
 * Refuses a text longer than its column's declared length (400 invalid_value). Checked on the
 * values a write is about to bind, after the auth tables' own rules (a policy's or a username's
 * length) have answered in their own words.
 */
export function checkDeclaredLength(column: ColumnInfo, value: unknown): void {
  if (typeof value !== 'string' || column.valueKind !== 'text' || fitsLength(column, value)) return;
  throw new RestError(
    'invalid_value',
    `${column.name} is longer than its type ${column.dbType} allows (${String(declaredLength(column))} characters)`,
    { details: { column: column.name } },
  );
}

function inRange(column: ColumnInfo, kind: ValueKind, value: unknown): boolean {
  if (kind === 'integer' && (typeof value === 'number' || typeof value === 'string'))
    return integerFits(column, value);
  if (kind === 'decimal' && (typeof value === 'number' || typeof value === 'string'))
    return decimalFits(column, value);
  return true;
}

/** A value written in the query string (`col=eq.<text>`). Returns undefined when invalid. */
function fromText(kind: ValueKind, text: string): unknown {
  switch (kind) {
    case 'integer':
      return INTEGER.test(text) ? integerFromText(text) : undefined;
    case 'decimal':
      return DECIMAL.test(text) ? text : undefined;
    case 'boolean':
      return text === 'true' ? true : text === 'false' ? false : undefined;
    case 'date':
      return isValidDate(text) ? text : undefined;
    case 'timestamp':
      return isValidTimestamp(text) ? text : undefined;
    case 'time':
      return TIME.test(text) ? text : undefined;
    case 'text':
    case 'other':
      return text;
    case 'json':
      return undefined;
  }
}

export function coerceQueryValue(column: ColumnInfo, text: string): unknown {
  if (isBadText(text)) throw badText(column);
  const kind = column.valueKind;
  const value = fromText(kind, text);
  if (value === undefined) throw invalidValue(column, kind);
  if (!inRange(column, kind, value)) throw outOfRange(column);
  return value;
}

/** A value of a JSON body. JSON null is SQL NULL for every kind, JSON columns included. */
export function coerceBodyValue(column: ColumnInfo, value: JsonValue): unknown {
  if (value === null) return null;
  if (hasBadText(value)) throw badText(column);
  const kind = column.valueKind;
  let result: unknown;
  switch (kind) {
    case 'json':
      result = value;
      break;
    case 'integer':
      if (typeof value === 'number') result = Number.isSafeInteger(value) ? value : undefined;
      else if (typeof value === 'string') result = fromText(kind, value);
      break;
    case 'decimal':
      if (typeof value === 'number') result = Number.isFinite(value) ? value : undefined;
      else if (typeof value === 'string') result = fromText(kind, value);
      break;
    case 'boolean':
      result = typeof value === 'boolean' ? value : undefined;
      break;
    case 'text':
      result = typeof value === 'string' ? value : undefined;
      break;
    case 'date':
    case 'timestamp':
    case 'time':
      result = typeof value === 'string' ? fromText(kind, value) : undefined;
      break;
    case 'other':
      result = typeof value !== 'object' ? value : undefined;
      break;
  }
  if (result === undefined) throw invalidValue(column, kind);
  if (!inRange(column, kind, result)) throw outOfRange(column);
  return result;
}
