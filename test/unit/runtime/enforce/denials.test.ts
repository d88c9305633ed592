import { describe, expect, it } from 'vitest';
import { ANONYMOUS, type AuthUser } from '../../../../compiler/types.js';
import { checkFailed, denialStatus, policyDenied } from '../../../../runtime/enforce/denials.js';

const alice: AuthUser = { id: 1, username: 'alice', is_admin: false, is_authenticated: true, claims: {} };

describe('policyDenied: the one 401/403 rule', () => {
  it('answers an anonymous user 401 with WWW-Authenticate, whatever the reason', () => {
    const e = policyDenied(ANONYMOUS, 'notes', { code: 'policy_check_failed', message: 'no' });
    expect([e.status, e.code, e.message, e.headers]).toEqual([
      401,
      'policy_check_failed',
      'no',
      { 'WWW-Authenticate': 'Bearer' },
    ]);
    expect(policyDenied(ANONYMOUS, 'notes').message).toBe('log in to access notes');
    expect(denialStatus(ANONYMOUS)).toBe(401);
  });

  it('answers a logged-in user 403 without the header', () => {
    const e = policyDenied(alice, 'notes');
    expect([e.status, e.code, e.message, e.headers]).toEqual([
      403,
      'forbidden',
      'you are not allowed to do this on notes',
      {},
    ]);
    expect(denialStatus(alice)).toBe(403);
  });

  it('names the refused row of a many-row create', () => {
    const e = checkFailed(alice, 'notes', 'create', { index: 2, many: true });
    expect(e.toBody()).toEqual({
      error: {
        code: 'policy_check_failed',
        message: 'the row at index 2 is not allowed by the policy of notes',
        details: { index: 2 },
      },
    });
  });

  it('says a row of a many-row create was refused when one statement cannot tell which', () => {
    const e = checkFailed(alice, 'notes', 'create', { many: true });
    expect(e.toBody()).toEqual({
      error: {
        code: 'policy_check_failed',
        message: 'a row of the request is not allowed by the policy of notes; none was written',
      },
    });
  });
});
