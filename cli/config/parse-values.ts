// Parsers of single configuration values (listen address, duration, on/off); errors are one
// clear `usage` sentence naming the setting.

import { RestError } from '../../errors/rest-error.js';
import type { ListenAddress } from '../../runtime/config.js';

export function configError(message: string): RestError {
  return new RestError('usage', 'invalid_config', message);
}

const ADDR = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]]*)):([0-9]{1,5})$/;

/** `host:port`, `:port` or `[ipv6]:port`; port 0 picks any free port. */
export function parseListenAddress(text: string, setting = 'addr'): ListenAddress {
  const m = ADDR.exec(text.trim());
  const port = Number(m?.[3]);
  if (m === null || !(port >= 0 && port <= 65535)) {
    throw configError(`${setting} must be host:port or :port with a port from 0 to 65535 (got "${text}")`);
  }
  const host = m[1] ?? m[2] ?? '';
  return { host: host === '' ? undefined : host, port };
}

const UNIT_SECONDS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3600, d: 86400 };
const DURATION = /^([0-9]+(?:\.[0-9]+)?)(s|m|h|d)/;

/** Go-style durations (`24h`, `1h30m`, `90s`, `2d`) or plain seconds; at least one second. */
export function parseDuration(value: string | number, setting: string): number {
  const fail = (): RestError =>
    configError(
      `${setting} must be a duration like 24h, 90m or 3600s, or a number of seconds (got "${value}")`,
    );
  let seconds: number;
  if (typeof value === 'number') seconds = value;
  else if (/^[0-9]+$/.test(value.trim())) seconds = Number(value.trim());
  else {
    let rest = value.trim();
    seconds = 0;
    if (rest === '') throw fail();
    while (rest !== '') {
      const m = DURATION.exec(rest);
      if (m === null) throw fail();
      seconds += Number(m[1]) * (UNIT_SECONDS[m[2] ?? 's'] ?? 1);
      rest = rest.slice(m[0].length);
    }
  }
  if (!Number.isFinite(seconds) || seconds < 1) throw fail();
  return Math.floor(seconds);
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
      throw configError(`${setting} must be on or off (got "${value}")`);
  }
}
