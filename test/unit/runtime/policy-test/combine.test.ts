// A case passes on PostgreSQL only when it passes on both paths and the paths saw the same thing.

import { describe, expect, it } from 'vitest';
import { combineRuns } from '../../../../runtime/policy-test/run-file.js';
import type { PathRun } from '../../../../runtime/policy-test/run-path.js';
import { checkExpectation, observe } from '../../../../runtime/policy-test/expectations.js';

const item = { name: 'alice GET /notes', kind: 'case' as const, line: 3, column: 5 };
const run = (path: 'native' | 'portable', rows: number[], passed = true): PathRun => ({
  path,
  items: [item],
  outcomes: [
    {
      passed,
      problems: passed ? [] : ['expected status 200, got 403'],
      observed: { status: 200, rows, count: rows.length },
    },
  ],
});

describe('combineRuns', () => {
  it('passes a case both paths passed with the same rows', () => {
    const [c] = combineRuns([run('native', [1, 2]), run('portable', [2, 1])]);
    expect(c?.passed).toBe(true);
  });
  it('fails a case whose paths both passed a loose expectation but returned different rows', () => {
    const [c] = combineRuns([run('native', [1]), run('portable', [1, 2])]);
    expect(c?.passed).toBe(false);
    expect(c?.problems).toEqual(['the paths disagree: native 200 rows [1]; portable 200 rows [1, 2]']);
  });
  it('fails a case that failed on one path, naming the path', () => {
    const [c] = combineRuns([run('native', [1], false), run('portable', [1])]);
    expect(c?.passed).toBe(false);
    expect(c?.problems).toContain('native: expected status 200, got 403');
  });
});

describe('checkExpectation', () => {
  const table = {
    name: 'notes',
    columns: [],
    columnsByName: new Map(),
    primaryKey: ['id'],
  };
  it('compares primary keys as a set and as text', () => {
    const o = observe(
      200,
      [
        { id: '2', t: 'b' },
        { id: 1, t: 'a' },
      ],
      table,
    );
    expect(checkExpectation({ rows: [1, 2] }, o)).toEqual([]);
    expect(checkExpectation({ rows: [1] }, o)).toEqual(['expected rows [1], got rows ["2", 1]']);
  });
  it('reads the error code of either dialect and the keys of each row', () => {
    expect(observe(403, { error: { code: 'policy_denied', message: 'no' } }, table).code).toBe(
      'policy_denied',
    );
    expect(observe(401, { code: 'PGRST301', message: 'no' }, table).code).toBe('PGRST301');
    expect(checkExpectation({ columns: ['id'] }, observe(200, [{ id: 1, t: 'a' }], table))).toEqual([
      'expected columns [id] in each row, got a row with [id, t]',
    ]);
  });
});
