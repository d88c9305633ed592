// The user flags of `policy explain` → the spec the runtime resolves (runtime/explain-user.ts):
// anonymous by default, --user a stored user by id or name, --admin some admin; usage errors
// quote what they reject.

import { describe, expect, it } from 'vitest';
import { explainUserSpec, type ExplainUserFlags } from '../../../cli/handlers/explain-user-flags.js';
import { RestError } from '../../../errors/rest-error.js';

const flags = (f: Partial<ExplainUserFlags>): ExplainUserFlags => ({ admin: false, anonymous: false, ...f });

describe('explainUserSpec', () => {
  it.each([
    ['no flag', {}, { kind: 'anonymous' }],
    ['--anonymous', { anonymous: true }, { kind: 'anonymous' }],
    ['--user <id>', { user: '2' }, { kind: 'stored', ref: '2', claims: {} }],
    [
      '--user <name> --claims',
      { user: 'bob', claims: '{"org_id": 7}' },
      { kind: 'stored', ref: 'bob', claims: { org_id: 7 } },
    ],
    ['--admin', { admin: true }, { kind: 'some_admin', claims: {} }],
    ['--claims alone', { claims: '{"user_id": 1}' }, { kind: 'token', claims: { user_id: 1 } }],
    [
      '--admin --claims',
      { admin: true, claims: '{"org_id": 7}' },
      { kind: 'some_admin', claims: { org_id: 7 } },
    ],
  ] as const)('%s', (_what, given, spec) => {
    expect(explainUserSpec(flags(given))).toEqual(spec);
  });

  it.each([
    [
      '--user with --admin',
      { user: '2', admin: true },
      '--user and --admin exclude each other: --user loads a stored user (with its is_admin), --admin means some admin',
    ],
    [
      '--admin with --anonymous',
      { admin: true, anonymous: true },
      /^--admin and --anonymous exclude each other/,
    ],
    [
      '--claims with --anonymous',
      { anonymous: true, claims: '{"user_id": 1}' },
      '--anonymous and --claims exclude each other: --claims describes the caller of a token',
    ],
    [
      '--claims that is an array',
      { user: '2', claims: '[1]' },
      `--claims '[1]' is not a JSON object such as '{"org_id": 7}'`,
    ],
    [
      '--claims that is not JSON',
      { user: '2', claims: "{'a': 1}" },
      /^--claims "\{'a': 1\}" is not a JSON object/,
    ],
  ] as const)('refuses %s as a usage error (exit 1)', (_what, given, message) => {
    let error: unknown;
    try {
      explainUserSpec(flags(given));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RestError);
    expect((error as RestError).exitCode).toBe(1);
    expect((error as RestError).message).toMatch(message);
  });
});
