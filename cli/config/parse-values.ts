// Parsers of single configuration values (listen address, duration, on/off); errors are one
// clear `usage` sentence naming the setting and quoting the rejected value (`<setting> '<value>'
// is not …`, docs/cli.md).

import { quoteValue } from '../../errors/quote-value.js';
import { RestError } from '../../errors/rest-error.js';
import type { ListenAddress } from '../../runtime/config.js';

export function configError(message: string): RestError {
  return new RestError('invalid_config', message);
}

/** `<setting> '<value>' is not <what>`: the one shape of a rejected configuration value. */
const rejected = (setting: string, value: string | number, what: string): RestError =>
  configError(`${setting} ${quoteValue(String(value))} is not ${what}`);

const ADDR = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]]*)):([0-9]{1,5})$/;

/** `host:port`, `:port` or `[ipv6]:port`; port 0 picks any free port. */
export function parseListenAddress(text: string, setting = 'addr'): ListenAddress {
  const m = ADDR.exec(text.trim());
  const port = Number(m?.[3]);
  if (m === null || !(port >= 0 && port <= 65535)) {
    throw rejected(setting, text, 'host:port or :port with a port from 0 to 65535');
  }
  const host = m[1] ?? m[2] ?? '';
  return { host: host === '' ? undefined : host, port };
}

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d)/;

/** Go-style (`24h`, `1h30m`, `90s`, `500ms`, `2d`) or a whole number of seconds → milliseconds. */
function durationMs(value: string | number): number | undefined {
  if (typeof value === 'number') return value * 1000;
  let rest = value.trim();
  if (/^[0-9]+$/.test(rest)) return Number(rest) * 1000;
  if (rest === '') return undefined;
  let ms = 0;
  while (rest !== '') {
    const m = DURATION.exec(rest);
    if (m === null) return undefined;
    ms += Number(m[1]) * (UNIT_MS[m[2] ?? 's'] ?? 1000);
    rest = rest.slice(m[0].length);
  }
  return ms;
}

/** A duration of at least one second, in whole seconds (`auth.token_ttl`). */
export function parseDuration(value: string | number, setting: string): number {
  const ms = durationMs(value);
  if (ms === undefined || !Number.isFinite(ms) || ms < 1000) {
    throw rejected(setting, value, 'a duration like 24h, 90m or 3600s, or a number of seconds');
  }
  return Math.floor(ms / 1000);
}

/** PostgreSQL's statement_timeout is a 32-bit number of milliseconds (about 24.8 days). */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** A timeout in whole milliseconds (`db.statement_timeout`); 0 means no limit. */
export function parseTimeout(value: string | number, setting: string): number {
  const ms = durationMs(value);
  if (ms === undefined || !Number.isFinite(ms) || ms < 0 || (ms > 0 && ms < 1) || ms > MAX_TIMEOUT_MS) {
    throw rejected(
      setting,
      value,
      'a duration like 10s, 500ms or 1m, a number of seconds, or 0 for no limit, at most 24d',
    );
  }
  return Math.floor(ms);
}

/** A whole number from 1 up (`http.max_rows`). */
export function parsePositiveInteger(value: string | number, setting: string, what: string): number {
  const n = typeof value === 'number' ? value : /^[0-9]+$/.test(value.trim()) ? Number(value.trim()) : NaN;
  if (!Number.isSafeInteger(n) || n < 1) {
    throw rejected(setting, value, `a whole number of ${what}, at least 1`);
  }
  return n;
}

/** on/off, true/false, yes/no, 1/0 → boolean. */
export function parseSwitch(value: string | boolean, setting: string): boolean {
  if (typeof value === 'boolean') return value;
  switch (value.trim().toLowerCase()) {
    case 'on':
    case 'true':
    case 'yes':
    case '1':
      return true;
    case 'off':
    case 'false':
    case 'no':
    case '0':
      return false;
    default:
      throw rejected(setting, value, 'on or off');
  }
}
