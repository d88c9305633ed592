// Writes are judged as stored: the flags the database hands back, the error a raising check ends
// its statement with, and the table whose stored rows cannot be found again.

import { describe, expect, it } from 'vitest';
import { ANONYMOUS, type AuthUser } from '../../../../compiler/types.js';
import { RestError } from '../../../../errors/rest-error.js';
import {
  judgeStoredRows,
  raisedCheckRefusal,
  unverifiable,
  type StoredJudgement,
} from '../../../../runtime/enforce/stored-checks.js';

const alice: AuthUser = { id: 1, username: 'alice', is_admin: false, is_authenticated: true, claims: {} };
const judgement: StoredJudgement = { user: alice, table: 'notes', action: 'create', flag: 'rest_check' };

describe('judgeStoredRows', () => {
  it('strips the flag of rows the database passed', () => {
    expect(judgeStoredRows([{ id: 1, rest_check: 1 }], judgement)).toEqual([{ id: 1 }]);
  });

  it.each([0, null, '0', undefined, 2])('refuses a row whose flag is %s', (flag) => {
    expect(() => judgeStoredRows([{ id: 1, rest_check: flag }], judgement)).toThrow(
      expect.objectContaining({ status: 403, code: 'policy_check_failed' }) as Error,
    );
  });

  it('places the refused row of a many-row create', () => {
    expect(() => judgeStoredRows([{ id: 9, rest_check: 0 }], judgement, { offset: 3, many: true })).toThrow(
      expect.objectContaining({ details: { index: 3 } }) as Error,
    );
  });

  it('fails closed when the flag column is missing', () => {
    expect(() => judgeStoredRows([{ id: 1 }], judgement)).toThrow(
      expect.objectContaining({ status: 500 }) as Error,
    );
  });
});

describe('raisedCheckRefusal', () => {
  /** A statement's error as the PostgreSQL adapter maps it, the driver's error as its cause. */
  const mapped = (sqlState: string): RestError =>
    new RestError('invalid_value', 'the database refused a value', { cause: { code: sqlState } });

  it("turns the raising check's division by zero into the policy's refusal", () => {
    const cause = mapped('22012');
    const refusal = raisedCheckRefusal(cause, judgement, { many: true });
    expect(refusal).toMatchObject({ status: 403, code: 'policy_check_failed', cause });
    expect((refusal as RestError).message).toBe(
      'a row of the request is not allowed by the policy of notes; none was written',
    );
  });

  it('refuses an anonymous user with 401', () => {
    expect(raisedCheckRefusal(mapped('22012'), { ...judgement, user: ANONYMOUS })).toMatchObject({
      status: 401,
      code: 'policy_check_failed',
    });
  });

  it.each([mapped('23505'), mapped('22P02'), new Error('22012'), { code: '22012' }])(
    'leaves any other error as it is: %o',
    (e) => {
      expect(raisedCheckRefusal(e, judgement)).toBe(e);
    },
  );
});

describe('unverifiable', () => {
  it('refuses a write to a table whose stored rows cannot be found again', () => {
    expect(unverifiable(alice, 'logs')).toMatchObject({ status: 403, code: 'policy_check_unverifiable' });
    expect(unverifiable(ANONYMOUS, 'logs')).toMatchObject({ status: 401, code: 'policy_check_unverifiable' });
  });
});
