// Value conversions shared by the adapters so the three databases bind and return the same JSON:
// big integers, ISO-8601 timestamps, JSON parameters.

/** Integers become JS numbers when exact, otherwise decimal strings (no digit is ever lost). */
export function integerValue(value: bigint | number | string): number | string {
  if (typeof value === 'number') return value;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : String(value);
}

/** Decimals become JS numbers: exact up to ~15 significant digits (IEEE-754 double). */
export function decimalValue(value: bigint | number | string): number {
  return Number(value);
}

/** Objects and arrays are bound as JSON text; drivers would otherwise expand them (mysql2) or
 * turn arrays into PostgreSQL array literals (pg). Everything else is bound as is. */
export function bindParam(value: unknown): unknown {
  if (value === undefined) return null;
  if (typeof value === 'object' && value !== null && !(value instanceof Date) && !Buffer.isBuffer(value)) {
    return JSON.stringify(value);
  }
  return value;
}

const LOCAL_TIMESTAMP = /^(\d{4}-\d{2}-\d{2})(?:[ T](\d{2}:\d{2})(?::(\d{2})(?:\.(\d+))?)?)?$/;
const ZONED_TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2}))?(?:\.(\d+))?(Z|[+-]\d{2}(?::?\d{2}(?::?\d{2})?)?)$/i;

const fraction = (digits: string | undefined): string => {
  const trimmed = (digits ?? '').replace(/0+$/, '');
  return trimmed === '' ? '' : `.${trimmed}`;
};

/**
 * `2024-01-02 03:04:05.500` → `2024-01-02T03:04:05.5` (a timestamp without time zone): one text
 * form on every database, seconds always written (`2024-01-02 03:04` and `2024-01-02`, which
 * SQLite may hold, become `2024-01-02T03:04:00` and `2024-01-02T00:00:00`).
 */
export function localTimestamp(text: string): string {
  const m = LOCAL_TIMESTAMP.exec(text);
  return m === null ? text : `${m[1]}T${m[2] ?? '00:00'}:${m[3] ?? '00'}${fraction(m[4])}`;
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** A timestamp with an offset, converted to UTC: `2024-01-02 05:04:05.5+02` → `2024-01-02T03:04:05.5Z`.
 * Text that is not such a timestamp (infinity, BC dates, years past 9999) is returned unchanged. */
export function utcTimestamp(text: string): string {
  const m = ZONED_TIMESTAMP.exec(text);
  if (m === null) return text;
  const [, y, mo, d, h, mi, s, frac, zone = 'Z'] = m;
  let offsetSeconds = 0;
  if (zone.toUpperCase() !== 'Z') {
    const digits = zone.slice(1).replaceAll(':', '');
    const seconds =
      Number(digits.slice(0, 2)) * 3600 +
      Number(digits.slice(2, 4) || 0) * 60 +
      Number(digits.slice(4, 6) || 0);
    offsetSeconds = zone.startsWith('-') ? -seconds : seconds;
  }
  const ms =
    Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s ?? 0)) -
    offsetSeconds * 1000;
  const t = new Date(ms);
  if (Number.isNaN(ms) || t.getUTCFullYear() < 1 || t.getUTCFullYear() > 9999) return text;
  const date = `${pad(t.getUTCFullYear(), 4)}-${pad(t.getUTCMonth() + 1)}-${pad(t.getUTCDate())}`;
  return `${date}T${pad(t.getUTCHours())}:${pad(t.getUTCMinutes())}:${pad(t.getUTCSeconds())}${fraction(frac)}Z`;
}

/** Parses JSON text read from a JSON column; text that is not JSON is returned unchanged. */
export function jsonValue(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}
