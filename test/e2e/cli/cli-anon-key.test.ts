// `rest auth anon-key` through the built binary: the key of docs/authentication.md, from the flag or
// the environment, refused without a good secret; a server with the same secret reads it as anonymous.

import { decodeProtectedHeader, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../support/databases.js';
import { client } from '../../support/http.js';
import { newSecret } from '../../support/secret.js';
import { openRawSql, startTestServer, testConfig, type TestServer } from '../../support/server.js';
import { expectError } from '../http/matrix.js';
import { runCliProcess } from './run-cli.js';

const SECRET = newSecret();

describe('rest auth anon-key', () => {
  let db: TestDatabase;
  let server: TestServer;

  beforeAll(async () => {
    db = await createTestDatabase('sqlite');
    const sql = await openRawSql(db);
    await sql.exec('CREATE TABLE things (id INTEGER PRIMARY KEY)');
    await sql.close();
    const config = testConfig(db.url);
    server = await startTestServer({ ...config, auth: { ...config.auth, enabled: true, secret: SECRET } });
  });

  afterAll(async () => {
    await server?.handle.close();
    await db?.drop();
  });

  it('prints one line, a JWT {"role":"anon"} signed HS256 with the secret', async () => {
    const r = await runCliProcess(['-auth.secret', SECRET, 'auth', 'anon-key']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
    const key = r.stdout.trim();
    expect(decodeProtectedHeader(key)).toEqual({ alg: 'HS256', typ: 'JWT' });
    const { payload } = await jwtVerify(key, new TextEncoder().encode(SECRET));
    expect(payload).toEqual({ role: 'anon' });
  });

  it('reads the secret from REST_AUTH_SECRET and gives the same key', async () => {
    const fromFlag = await runCliProcess(['-auth.secret', SECRET, 'auth', 'anon-key']);
    const fromEnv = await runCliProcess(['auth', 'anon-key'], { env: { REST_AUTH_SECRET: SECRET } });
    expect(fromEnv.code, fromEnv.stderr).toBe(0);
    expect(fromEnv.stdout).toBe(fromFlag.stdout);
  });

  it('is the anonymous user for a server with that secret, and a bad token for another', async () => {
    const key = (await runCliProcess(['-auth.secret', SECRET, 'auth', 'anon-key'])).stdout.trim();
    const other = (await runCliProcess(['-auth.secret', newSecret(), 'auth', 'anon-key'])).stdout.trim();
    const http = client(server.url);
    // No policies (setup has not run): every caller is refused, an anonymous one with 401 unauthenticated.
    const none = await http.get('/things');
    expectError(none, 401, 'unauthenticated');
    for (const headers of [{ apikey: key }, { authorization: `Bearer ${key}` }]) {
      const r = await http.get('/things', { headers });
      expectError(r, 401, 'unauthenticated');
      expect(r.json).toEqual(none.json);
    }
    for (const headers of [{ apikey: other }, { authorization: `Bearer ${other}` }]) {
      expectError(await http.get('/things', { headers }), 401, 'invalid_token');
    }
  });

  it.each([
    ['no secret', [], /^rest: auth anon-key signs with the server secret: give it with -auth.secret/],
    ['a short secret', ['-auth.secret', 'short'], /auth.secret must be at least 32 bytes/],
    ['an empty secret', ['-auth.secret', ''], /-auth.secret is empty/],
  ])('exits 1 with one line and no key for %s', async (_label, flags, message) => {
    const r = await runCliProcess([...flags, 'auth', 'anon-key']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^rest: [^\n]+\n$/);
    expect(r.stderr).toMatch(message);
  });

  it('is listed by rest auth --help', async () => {
    const r = await runCliProcess(['auth', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/auth anon-key +Print the API key of anonymous clients/);
  });
});
