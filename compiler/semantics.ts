// The meaning of values in the policy language, shared by every enforcement path:
//
// - Static types: number (integer/decimal columns, numeric literals, auth_user.id), text
//   (text columns, strings, auth_user.username), boolean, null (the literal), claim (a JWT claim,
//   typed by what it is compared with) and other (json, dates…: only `is [not] null` allowed).
// - Comparisons need both sides of one type (null and claims fit any); text compares by Unicode
//   code point, case-, accent- and trailing-space-sensitive on every database.
// - A claim compared with a number is a finite JSON number or a numeric string of at most 15
//   digits (NUMERIC_TEXT_PATTERN: `-12`, `3.25`; 15 digits survive the trip through a double, so
//   JavaScript and PostgreSQL's numeric agree), with text a JSON string, with a boolean a JSON
//   boolean; anything else is NULL. Alone, a claim is a condition (boolean). Claim compared with
//   claim, or with null: text. In `in (…)` the first non-null literal gives the type.
// - `<claim> is null` is TRUE when the claim is absent or JSON null, whatever its type.
// - Text that no database can hold (a NUL character, a lone UTF-16 surrogate) and numbers that
//   JSON cannot carry (NaN, ±Infinity) in auth_user.username or a claim count as NULL
//   (claimValue, usableText), so that every path sees the same user.
// - Three-valued logic as SQL: NULL compares unknown; and/or/not are Kleene; allowed iff TRUE.

import type { ColumnType } from './types.js';

/** `unknown`: a column whose type is not known (no schema given, or the table lacks it). */
export type StaticType = 'number' | 'text' | 'boolean' | 'null' | 'claim' | 'other' | 'unknown';
/** The types a claim can be coerced to. */
export type ClaimTarget = 'number' | 'text' | 'boolean';
export type Value = number | string | boolean | null;

export const staticTypeOfColumn: Readonly<Record<ColumnType, StaticType>> = {
  integer: 'number',
  decimal: 'number',
  text: 'text',
  boolean: 'boolean',
  other: 'other',
};

/** Same text in JavaScript and in PostgreSQL's regular expressions (ARE): one home for both. */
export const NUMERIC_TEXT_PATTERN = '^-?(?=(?:[0-9][.]?){1,15}$)[0-9]+(?:[.][0-9]+)?$';
export const NUMERIC_TEXT = new RegExp(NUMERIC_TEXT_PATTERN);

const LONE_SURROGATE = /\p{Cs}/u;

/** `s`, or null when no database could store it (NUL, lone surrogate). */
export const usableText = (s: string | null): string | null =>
  s === null || s.includes('\u0000') || LONE_SURROGATE.test(s) ? null : s;

/** A JSON value as every path sees it: unstorable strings and non-finite numbers become null. */
export function usableJson(value: unknown): unknown {
  if (typeof value === 'string') return usableText(value);
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  return value === undefined ? null : value;
}

/** The claim `name` of a user (`null` when absent), as every path sees it. */
export const claimValue = (claims: Readonly<Record<string, unknown>>, name: string): unknown =>
  Object.hasOwn(claims, name) ? usableJson(claims[name]) : null;

export function coerceClaim(value: unknown, target: ClaimTarget): Value {
  switch (target) {
    case 'number':
      if (typeof value === 'number') return Number.isFinite(value) ? value : null;
      return typeof value === 'string' && NUMERIC_TEXT.test(value) ? Number(value) : null;
    case 'text':
      return typeof value === 'string' ? value : null;
    case 'boolean':
      return typeof value === 'boolean' ? value : null;
  }
}

/** A row value as the database compares it, from what a driver or a request body gives. */
export function normaliseColumnValue(value: unknown, type: ColumnType | undefined): Value {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'integer':
    case 'decimal': {
      const n =
        typeof value === 'number' || typeof value === 'bigint'
          ? Number(value)
          : typeof value === 'string' && value.trim() !== ''
            ? Number(value)
            : NaN;
      return Number.isFinite(n) ? n : null;
    }
    case 'boolean':
      if (typeof value === 'boolean') return value;
      if (value === 1 || value === '1' || value === 't' || value === 'true') return true;
      if (value === 0 || value === '0' || value === 'f' || value === 'false') return false;
      return null;
    case 'text':
      return typeof value === 'string' ? value : String(value);
    default:
      return typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean'
        ? value
        : String(value);
  }
}

// UTF-16 code units order astral characters (surrogates D800–DFFF) before E000–FFFF; moving the
// surrogates above FFFF gives code point order, which is byte order in UTF-8 (PostgreSQL's "C",
// MySQL's binary strings, SQLite's BINARY). Inputs are well-formed (usableText).
const codePointRank = (unit: number): number =>
  unit < 0xd800 ? unit : unit >= 0xe000 ? unit - 0x800 : unit + 0x2000;

/** Orders strings by code point (JS `<` orders UTF-16 code units, which differs for astral characters). */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

export function compareValues(a: number | string | boolean, b: number | string | boolean): number {
  if (typeof a === 'string' && typeof b === 'string') return compareCodePoints(a, b);
  const x = Number(a);
  const y = Number(b);
  return x < y ? -1 : x > y ? 1 : 0;
}
