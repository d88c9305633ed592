import { describe, expect, it } from 'vitest';
import { STALE_PENDING_MS, addressKey, judge, liveCounts } from '../../../../runtime/auth/rate-limiter.js';
import type { ThrottleState } from '../../../../runtime/auth/rate-limiter.js';

// The decisions of the login limits on one database row each; the rows themselves (shared by
// processes, locked while judged) are proven on every database in test/contract/login-throttle.test.ts.

const WINDOW = 600_000;
const NOW = 10_000_000;
const state = (over: Partial<ThrottleState> = {}): ThrottleState => ({
  windowStart: NOW - 60_000,
  failures: 0,
  pending: 0,
  pendingSince: NOW - 1000,
  ...over,
});

describe('liveCounts', () => {
  it('forgets failures once their window is over and pending attempts once they are stale', () => {
    expect(liveCounts(state({ failures: 3, pending: 2 }), NOW, WINDOW)).toEqual({ failures: 3, pending: 2 });
    expect(liveCounts(state({ failures: 3, windowStart: NOW - WINDOW }), NOW, WINDOW).failures).toBe(0);
    expect(liveCounts(state({ failures: 3, windowStart: NOW - WINDOW + 1 }), NOW, WINDOW).failures).toBe(3);
    expect(liveCounts(state({ pending: 2, pendingSince: NOW - STALE_PENDING_MS }), NOW, WINDOW).pending).toBe(
      0,
    );
  });
});

describe('judge', () => {
  it('lets an attempt go while failures and attempts in flight stay under every limit', () => {
    expect(judge([{ state: state({ failures: 2, pending: 2 }), limit: 5 }], NOW, WINDOW)).toEqual({
      kind: 'go',
    });
  });

  it('waits, never refuses, while attempts in flight fill what the failures leave', () => {
    expect(judge([{ state: state({ failures: 0, pending: 5 }), limit: 5 }], NOW, WINDOW)).toEqual({
      kind: 'wait',
    });
    expect(judge([{ state: state({ failures: 4, pending: 1 }), limit: 5 }], NOW, WINDOW)).toEqual({
      kind: 'wait',
    });
  });

  it('refuses when failures alone reach a limit, until that window ends (Retry-After in seconds, at least 1)', () => {
    const full = state({ failures: 5, windowStart: NOW - 60_000 });
    expect(judge([{ state: full, limit: 5 }], NOW, WINDOW)).toEqual({ kind: 'refuse', retryAfter: 540 });
    const ending = state({ failures: 5, windowStart: NOW - WINDOW + 10 });
    expect(judge([{ state: ending, limit: 5 }], NOW, WINDOW)).toEqual({ kind: 'refuse', retryAfter: 1 });
  });

  it('never asks to wait longer than one window, though a concurrent attempt that read its clock later started it', () => {
    const later = state({ failures: 5, windowStart: NOW + 1 });
    expect(judge([{ state: later, limit: 5 }], NOW, WINDOW)).toEqual({
      kind: 'refuse',
      retryAfter: WINDOW / 1000,
    });
  });

  it('refuses for the longest window of the limits reached, before waiting on another', () => {
    const checks = [
      { state: state({ failures: 20, windowStart: NOW - 500_000 }), limit: 20 },
      { state: state({ failures: 1, windowStart: NOW - 100_000 }), limit: 1 },
      { state: state({ pending: 9 }), limit: 5 },
    ];
    expect(judge(checks, NOW, WINDOW)).toEqual({ kind: 'refuse', retryAfter: 500 });
  });

  it('ignores an expired window and stale attempts in flight', () => {
    const old = state({
      failures: 50,
      windowStart: NOW - WINDOW - 1,
      pending: 50,
      pendingSince: NOW - STALE_PENDING_MS - 1,
    });
    expect(judge([{ state: old, limit: 1 }], NOW, WINDOW)).toEqual({ kind: 'go' });
  });
});

describe('addressKey', () => {
  it.each([
    ['192.0.2.5', '192.0.2.5'],
    ['::ffff:192.0.2.5', '192.0.2.5'],
    ['::FFFF:192.0.2.5', '192.0.2.5'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['2001:0db8:0000:0000:0000:0000:0000:0001', '2001:db8:0:0::/64'],
    ['2001:db8:a:b:c:d:e:f', '2001:db8:a:b::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['1::2:3:4:5:1.2.3.4', '1:0:2:3::/64'],
    ['unix-socket', 'unix-socket'],
  ])('%s → %s', (address, key) => {
    expect(addressKey(address)).toBe(key);
  });
});
