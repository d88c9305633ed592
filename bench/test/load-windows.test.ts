// How the bench's load windows end (the smoke profile): after a time, after a number of
// requests, or beside other loads. The options that choose them, what the report says of them, and
// the load itself against a local server (no timing asserted: counts, and a floor the server sets).

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoadSpec } from '../driver-protocol.js';
import { runTogether } from '../load.js';
import { FULL_PROFILE, isFullProtocol, parseBenchOptions, SMOKE_REQUESTS, windowText } from '../options.js';
import type { BenchReport } from '../report-model.js';
import { windowsText } from '../report-markdown.js';

const parse = (...argv: string[]) => parseBenchOptions(argv, {});

describe('the windows of parseBenchOptions', () => {
  it('keeps the full profile timed: 10 s rounds after a 5 s warm-up, a 10 s login window', () => {
    const o = parse();
    expect([o.roundWindow, o.warmupWindow, o.loginWindow]).toEqual([
      { kind: 'seconds', seconds: FULL_PROFILE.roundSeconds },
      { kind: 'seconds', seconds: FULL_PROFILE.warmupSeconds },
      { kind: 'seconds', seconds: FULL_PROFILE.loginSeconds },
    ]);
    expect([o.startupRounds, o.roundTripRequests]).toEqual([15, 400]);
  });

  it('ends the smoke windows after a number of requests: 200 a round, 50 a warm-up, 8 logins', () => {
    const o = parse('--smoke');
    expect([o.roundWindow, o.warmupWindow, o.loginWindow]).toEqual([
      { kind: 'requests', requests: SMOKE_REQUESTS.round },
      { kind: 'requests', requests: SMOKE_REQUESTS.round / 4 },
      { kind: 'requests', requests: SMOKE_REQUESTS.login },
    ]);
    expect(SMOKE_REQUESTS).toEqual({ round: 200, login: 8 });
    expect(o.startupRounds).toBe(1);
  });

  it('times the smoke rounds again with --duration, with the old half-second warm-up', () => {
    const o = parse('--smoke', '--duration', '1', '--login-duration', '1');
    expect([o.roundWindow, o.warmupWindow, o.loginWindow]).toEqual([
      { kind: 'seconds', seconds: 1 },
      { kind: 'seconds', seconds: 0.5 },
      { kind: 'seconds', seconds: 1 },
    ]);
  });

  it('counts the full profile with --requests: a warm-up of a quarter, at least one per connection; logins stay timed', () => {
    const o = parse('--requests', '1000');
    expect([o.roundWindow, o.warmupWindow, o.loginWindow]).toEqual([
      { kind: 'requests', requests: 1000 },
      { kind: 'requests', requests: 250 },
      { kind: 'seconds', seconds: FULL_PROFILE.loginSeconds },
    ]);
    expect(parse('--requests', '40').warmupWindow).toEqual({ kind: 'requests', requests: 32 });
    expect(parse('--requests', '40', '--connections', '4').warmupWindow).toEqual({
      kind: 'requests',
      requests: 10,
    });
  });

  it('takes each window in seconds or in requests as given', () => {
    const o = parse('--requests', '500', '--warmup', '2', '--login-requests', '64');
    expect([o.roundWindow, o.warmupWindow, o.loginWindow]).toEqual([
      { kind: 'requests', requests: 500 },
      { kind: 'seconds', seconds: 2 },
      { kind: 'requests', requests: 64 },
    ]);
    expect(parse('--warmup-requests', '100').warmupWindow).toEqual({ kind: 'requests', requests: 100 });
    expect(parse('--smoke', '--connections', '300').roundWindow).toEqual({ kind: 'requests', requests: 300 });
  });

  it('refuses both ends for one window, fewer requests than connections, and fractions', () => {
    expect(() => parse('--requests', '200', '--duration', '1')).toThrow(/--duration and --requests/);
    expect(() => parse('--warmup', '1', '--warmup-requests', '50')).toThrow(/--warmup and --warmup-requests/);
    expect(() => parse('--login-duration', '1', '--login-requests', '8')).toThrow(/two ends of one window/);
    expect(() => parse('--requests', '16')).toThrow(/--requests must be a whole number of at least 32/);
    expect(() => parse('--smoke', '--connections', '8', '--warmup-requests', '4')).toThrow(
      /--warmup-requests must be a whole number of at least 8/,
    );
    expect(() => parse('--login-requests', '4')).toThrow(/at least 8 \(one per connection\)/);
    expect(() => parse('--requests', '100.5')).toThrow(/whole number/);
    expect(() => parse('--requests', '0')).toThrow(/--requests must be a positive number/);
  });

  it('names a window for the log and the chart', () => {
    expect(windowText({ kind: 'seconds', seconds: 10 })).toBe('10 s');
    expect(windowText({ kind: 'requests', requests: 1200 })).toBe('1,200 requests');
    expect(windowText({ kind: 'requests', requests: 8 }, 'login')).toBe('8 logins');
    expect(windowText({ kind: 'requests', requests: 1 })).toBe('1 request');
  });
});

const timedConfig: BenchReport['config'] = {
  rows: 1_000_000,
  users: 1000,
  connections: 32,
  rounds: 5,
  writeRounds: 3,
  roundSeconds: 10,
  warmupSeconds: 5,
  loginSeconds: 10,
  roundRequests: null,
  warmupRequests: null,
  loginRequests: null,
};

describe('what the report says of the windows', () => {
  it('states a timed run as before', () => {
    expect(windowsText(timedConfig)).toEqual({
      reads: '5 rounds of 10 s after a 5 s warm-up per contender',
      writes: '3 rounds of 10 s',
      login: '',
      counted: false,
    });
    expect(isFullProtocol(timedConfig)).toBe(true);
  });

  it('states counted windows as requests, and does not call them the full protocol', () => {
    const counted = {
      ...timedConfig,
      rounds: 1,
      writeRounds: 1,
      roundSeconds: null,
      warmupSeconds: null,
      loginSeconds: null,
      roundRequests: 200,
      warmupRequests: 50,
      loginRequests: 8,
    };
    const text = windowsText(counted);
    expect(text.reads).toBe('1 round of 200 requests after a warm-up of 50 requests per contender');
    expect(text.writes).toBe('1 round of 200 requests');
    expect(text.login).toContain('the logins after 8 logins (the read beside them when they were done)');
    expect(text.counted).toBe(true);
    expect(isFullProtocol({ ...counted, rounds: 5, writeRounds: 3 })).toBe(false);
    const countedLogins: BenchReport['config'] = { ...timedConfig, loginSeconds: null, loginRequests: 400 };
    expect(isFullProtocol(countedLogins)).toBe(false);
  });

  it('reads a report written before the counts existed as timed', () => {
    const { roundRequests, warmupRequests, loginRequests, ...older } = timedConfig;
    expect([roundRequests, warmupRequests, loginRequests]).toEqual([null, null, null]);
    expect(windowsText(older).counted).toBe(false);
  });
});

describe('runTogether (the load driver)', () => {
  /** Answers `GET /slow` after `SLOW_MS`, anything else at once; counts what it answered. */
  const SLOW_MS = 5;
  let server: Server;
  let baseUrl = '';
  const answered = { slow: 0, fast: 0 };

  beforeAll(async () => {
    server = createServer((req, res) => {
      const slow = req.url === '/slow';
      const answer = (): void => {
        answered[slow ? 'slow' : 'fast']++;
        res.end('ok');
      };
      if (slow) setTimeout(answer, SLOW_MS);
      else answer();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const load = (path: string, window: LoadSpec['window'], connections: number): LoadSpec => ({
    label: path,
    baseUrl,
    connections,
    window,
    requests: [{ method: 'GET', path, headers: {} }],
  });

  it('ends a counted window after exactly its requests, with req/s over the time they took', async () => {
    answered.slow = 0;
    const [result] = await runTogether([load('/slow', { kind: 'requests', requests: 30 }, 3)]);
    expect(result?.responses).toBe(30);
    expect(result?.statusCounts).toEqual({ '200': 30 });
    expect(answered.slow).toBe(30);
    // 3 connections, 10 requests each, each answered after 5 ms or more: the window lasted 50 ms or
    // more, so req/s is at most 600 (not inflated); and it is the responses over that time.
    expect(result?.durationSeconds).toBeGreaterThanOrEqual((10 * SLOW_MS) / 1000);
    expect(result?.rps).toBeGreaterThan(0);
    expect(result?.rps).toBeCloseTo((result?.responses ?? 0) / (result?.durationSeconds ?? 1), 6);
    expect(result?.latencyMs.p50).toBeGreaterThanOrEqual(SLOW_MS - 1);
  });

  it('stops a load beside the others when they are done', async () => {
    const [leading, beside] = await runTogether([
      load('/slow', { kind: 'requests', requests: 20 }, 2),
      load('/fast', { kind: 'beside' }, 2),
    ]);
    expect(leading?.responses).toBe(20);
    expect(beside?.responses).toBeGreaterThan(0);
    expect(beside?.non2xx).toBe(0);
    expect(beside?.rps).toBeGreaterThan(0);
  });

  it('refuses loads that would all wait for another', async () => {
    await expect(runTogether([load('/fast', { kind: 'beside' }, 1)])).rejects.toThrow(/none would end/);
  });
});
