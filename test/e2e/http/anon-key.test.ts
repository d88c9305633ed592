// Anonymous API keys (docs/authentication.md): a token `{"role":"anon"}` signed with the secret is
// the anonymous user, in `Authorization` or in `apikey`, on every database; a badly signed one is 401.

import { beforeAll, expect, it } from 'vitest';
import { signAnonKey } from '../../../runtime/auth/tokens.js';
import type { Reply } from '../../support/http.js';
import { expectError } from './matrix.js';
import { bearer, forEachAuthDatabase, idsOf, resetRows, setPolicies } from './policy-support.js';

const OTHER_SECRET = 'not-the-server-secret-but-32-bytes-long';

/** What a refusal says, without its request id. */
const refusal = (r: Reply): unknown => ({
  status: r.status,
  body: r.json,
  authenticate: r.headers.get('www-authenticate'),
});

forEachAuthDatabase('anonymous API keys', (ctx) => {
  let anonKey = '';

  beforeAll(async () => {
    const { alice, bob } = ctx();
    anonKey = await signAnonKey(ctx().secret);
    await resetRows(
      ctx(),
      'notes',
      ['id', 'user_id', 'body'],
      [
        [1, alice.id, 'alice'],
        [2, bob.id, 'bob'],
      ],
    );
    await resetRows(ctx(), 'plain', ['id', 'body'], [[1, 'public']]);
    await setPolicies(ctx(), [
      { table_name: 'plain', action: 'read', expression: '' },
      { table_name: 'notes', action: 'read', expression: 'user_id = auth_user.id' },
    ]);
  });

  const withKey = (): ReadonlyArray<readonly [string, Readonly<Record<string, string>>]> => [
    ['Authorization', { authorization: `Bearer ${anonKey}` }],
    ['apikey', { apikey: anonKey }],
    ['both', { apikey: anonKey, authorization: `Bearer ${anonKey}` }],
  ];

  it('reads a public table with the key as an anonymous caller does', async () => {
    for (const [, headers] of withKey()) {
      const r = await ctx().http.get('/plain', { headers });
      expect(r.status, r.text).toBe(200);
      expect(idsOf(r)).toEqual([1]);
    }
  });

  it('is refused where a policy needs a user exactly as without a header (401)', async () => {
    const none = await ctx().http.get('/notes');
    expectError(none, 401, 'unauthenticated');
    for (const [, headers] of withKey()) {
      const r = await ctx().http.get('/notes', { headers });
      expectError(r, 401, 'unauthenticated');
      expect(refusal(r)).toEqual(refusal(none));
    }
  });

  it('is the anonymous user on the PostgREST dialect too', async () => {
    for (const [, headers] of withKey()) {
      const r = await ctx().http.get('/rest/v1/plain?select=id', { headers });
      expect(r.status, r.text).toBe(200);
      expect(r.json).toEqual([{ id: 1 }]);
      const denied = await ctx().http.get('/rest/v1/notes', { headers });
      expect(denied.status).toBe(401);
      expect(denied.json).toMatchObject({ code: '42501' });
    }
    const forged = await ctx().mint({ role: 'anon' }, { secret: OTHER_SECRET });
    for (const headers of [bearer(forged).headers, { apikey: forged }]) {
      const r = await ctx().http.get('/rest/v1/plain', { headers });
      expect(r.status).toBe(401);
      expect(r.json).toMatchObject({ code: 'PGRST301' });
    }
  });

  it("takes a logged-in user's token over the key sent beside it", async () => {
    const { alice } = ctx();
    const r = await ctx().http.get('/notes', { headers: { ...alice.auth.headers, apikey: anonKey } });
    expect(r.status, r.text).toBe(200);
    expect(idsOf(r)).toEqual([1]);
  });

  it('refuses an anon key with a bad signature, an expired one and a garbled apikey (401 invalid_token)', async () => {
    const forged = await ctx().mint({ role: 'anon' }, { secret: OTHER_SECRET });
    const expired = await ctx().mint({ role: 'anon' }, { expiresIn: -3600 });
    const { alice } = ctx();
    const cases: ReadonlyArray<Readonly<Record<string, string>>> = [
      bearer(forged).headers,
      { apikey: forged },
      { apikey: forged, ...alice.auth.headers },
      { apikey: anonKey, authorization: `Bearer ${forged}` },
      bearer(expired).headers,
      { apikey: 'not-a-key' },
    ];
    for (const headers of cases) {
      for (const path of ['/plain', '/notes']) {
        const r = await ctx().http.get(path, { headers });
        expectError(r, 401, 'invalid_token');
        expect(r.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token"/);
      }
    }
  });

  it('treats a token with another role and no user_id as invalid, never anonymous', async () => {
    const token = await ctx().mint({ role: 'authenticated' });
    expectError(await ctx().http.get('/plain', bearer(token)), 401, 'invalid_token');
  });

  it('gives the anonymous user nothing of the auth endpoints that need a login', async () => {
    const r = await ctx().http.post('/auth/sessions/revoke', {}, bearer(anonKey));
    expect(r.status, r.text).toBe(401);
  });
});
