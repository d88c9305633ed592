import type { Request } from 'express';
import { describe, expect, it } from 'vitest';
import { clientAddress } from '../../../../runtime/http/client-address.js';

const request = (remoteAddress: string | undefined, forwarded?: string | string[]): Request =>
  ({
    socket: { remoteAddress },
    headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded },
  }) as unknown as Request;

describe('clientAddress', () => {
  it('is the socket address without trust_proxy, whatever X-Forwarded-For says', () => {
    expect(clientAddress(request('10.0.0.1', '192.0.2.1'), false)).toBe('10.0.0.1');
    expect(clientAddress(request(undefined), false)).toBe('unknown');
  });

  it.each([
    ['192.0.2.1', '192.0.2.1'],
    ['198.51.100.9, 192.0.2.1', '192.0.2.1'],
    ['spoofed, 2001:db8::1', '2001:db8::1'],
    [' 192.0.2.1 ', '192.0.2.1'],
    [['198.51.100.9', '192.0.2.2'], '192.0.2.2'],
    ['192.0.2.1, not-an-ip', '10.0.0.1'],
    ['192.0.2.1:8080', '10.0.0.1'],
    ['', '10.0.0.1'],
  ])(
    'with trust_proxy, X-Forwarded-For %j → %s (the entry the proxy appended, else the socket)',
    (header, address) => {
      expect(clientAddress(request('10.0.0.1', header), true)).toBe(address);
    },
  );

  it('falls back to the socket address without the header', () => {
    expect(clientAddress(request('10.0.0.1'), true)).toBe('10.0.0.1');
  });
});
