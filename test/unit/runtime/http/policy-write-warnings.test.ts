import { describe, expect, it } from 'vitest';
import { isPolicyWrite, withWarnings } from '../../../../runtime/http/policy-write-warnings.js';
import type { PolicyEscalation } from '../../../../runtime/policies/policy-service.js';

const WARNING: PolicyEscalation = {
  table: 'user_roles',
  action: 'create',
  policy_id: 3,
  relation_policy_id: 4,
  relation_table: 'articles',
  message: 'm',
};

describe('isPolicyWrite: which requests answer escalation warnings', () => {
  const cases: ReadonlyArray<readonly [string, string, boolean]> = [
    ['POST', '/auth_policies', true],
    ['POST', '/auth_policies/', true],
    ['PUT', '/auth_policies/4', true],
    ['PATCH', '/auth_policies?id=eq.4', true],
    ['DELETE', '/auth_policies?id=gt.3', true],
    ['DELETE', '/auth%5Fpolicies/4', true],
    ['GET', '/auth_policies', false],
    ['HEAD', '/auth_policies', false],
    ['POST', '/auth_users', false],
    ['POST', '/auth_policies_archive', false],
    ['POST', '/rest/v1/auth_policies', false],
    ['POST', '/auth_policies/4/x', false],
    ['POST', '/%E0%A4%A', false],
  ];
  it.each(cases)('%s %s → %s', (method, url, expected) => {
    expect(isPolicyWrite({ method, url })).toBe(expected);
  });
});

describe('withWarnings: where the warnings go in an answer', () => {
  it('each row of a POST, one or many', () => {
    expect(withWarnings({ id: 4 }, [WARNING])).toEqual({ id: 4, warnings: [WARNING] });
    expect(withWarnings([{ id: 4 }, { id: 5 }], [])).toEqual([
      { id: 4, warnings: [] },
      { id: 5, warnings: [] },
    ]);
    expect(withWarnings([], [WARNING])).toEqual([]);
  });

  it('beside updated and deleted', () => {
    expect(withWarnings({ updated: 2 }, [WARNING])).toEqual({ updated: 2, warnings: [WARNING] });
    expect(withWarnings({ deleted: 0 }, [])).toEqual({ deleted: 0, warnings: [] });
  });

  it('anything else as it is', () => {
    expect(withWarnings(null, [WARNING])).toBe(null);
    expect(withWarnings('text', [WARNING])).toBe('text');
  });
});
