// Login throttling as a client sees it (docs/authentication.md), on every database: failures only, per username
// and client address and per client address, counters shared by servers on one database (each with
// its own pool, as separate processes have), 429 always with Retry-After, and the client address
// taken from X-Forwarded-For only with -http.trust_proxy.

import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_KINDS, isAvailable, skipReason } from '../../support/databases.js';
import { client, type Client, type Reply } from '../../support/http.js';
import { serverIt } from '../../support/server-only.js';
import { startTestServer, type TestServer } from '../../support/server.js';
import { expectError } from './matrix.js';
import { rollBackToFirstAuthVersion } from '../../support/auth-history.js';
import { startAuthSuite, type PolicyContext } from './policy-support.js';

const WINDOW_SECONDS = 15 * 60;

function expectThrottled(reply: Reply): void {
  expectError(reply, 429, 'too_many_attempts');
  const retryAfter = Number(reply.headers.get('retry-after'));
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(WINDOW_SECONDS);
}

const from = (address: string) => ({ headers: { 'x-forwarded-for': `203.0.113.250, ${address}` } });

for (const kind of ALL_KINDS) {
  const reason = skipReason(kind);
  describe.skipIf(!isAvailable(kind))(
    `login throttling [${kind}]${reason === undefined ? '' : ` — ${reason}`}`,
    () => {
      let ctx: PolicyContext;
      /** Two more servers on the same database, each with its own pool, behind a trusted proxy. */
      let proxied: TestServer[] = [];
      let b: Client;
      let c: Client;
      const register = async (username: string, password: string): Promise<void> => {
        expect((await ctx.http.post('/auth/register', { username, password })).status).toBe(201);
      };

      beforeAll(async () => {
        ctx = await startAuthSuite(kind);
        const config = { ...ctx.config, http: { ...ctx.config.http, trustProxy: true } };
        proxied = [await startTestServer(config), await startTestServer(config)];
        [b, c] = proxied.map((s) => client(s.url)) as [Client, Client];
        await register('carol', 'carol password');
        await register('dave', 'dave password');
        await register('erin', 'erin password');
      });
      afterAll(async () => {
        for (const server of proxied) await server.handle.close();
        await ctx?.server.handle.close();
        await ctx?.sql.close();
        await ctx?.db.drop();
      });

      // PGlite's one backend interleaves parallel connections' protocol messages: answers go astray or hang.
      serverIt(kind)('10 concurrent correct logins of one user from one address all succeed', async () => {
        const replies = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            (i % 2 === 0 ? b : c).post(
              '/auth/login',
              { username: 'alice', password: ctx.alice.password },
              from('192.0.2.10'),
            ),
          ),
        );
        expect(replies.map((r) => r.status)).toEqual(Array<number>(10).fill(200));
      });

      it('an attacker’s failures on one server are refused on the other; the owner logs in from another address', async () => {
        for (let i = 0; i < 5; i++) {
          const reply = await b.post(
            '/auth/login',
            { username: 'bob', password: `guess ${i}` },
            from('198.51.100.1'),
          );
          expectError(reply, 401, 'invalid_credentials');
        }
        expectThrottled(
          await c.post('/auth/login', { username: 'bob', password: `guess 6` }, from('198.51.100.1')),
        );
        // Even the right password is refused from there: the limit does not tell guesses apart.
        expectThrottled(
          await b.post('/auth/login', { username: 'BOB', password: ctx.bob.password }, from('198.51.100.1')),
        );
        const owner = await c.post(
          '/auth/login',
          { username: 'bob', password: ctx.bob.password },
          from('203.0.113.7'),
        );
        expect(owner.status, owner.text).toBe(200);
      });

      it('two servers count into the same counters: 3 failures on one and 2 on the other → 429 on both', async () => {
        for (const [server, n] of [
          [b, 3],
          [c, 2],
        ] as const) {
          for (let i = 0; i < n; i++) {
            expect(
              (
                await server.post(
                  '/auth/login',
                  { username: 'carol', password: 'wrong' },
                  from('198.51.100.2'),
                )
              ).status,
            ).toBe(401);
          }
        }
        expectThrottled(
          await b.post('/auth/login', { username: 'carol', password: 'wrong' }, from('198.51.100.2')),
        );
        expectThrottled(
          await c.post(
            '/auth/login',
            { username: 'carol', password: 'carol password' },
            from('198.51.100.2'),
          ),
        );
      });

      // PGlite's one backend interleaves parallel connections' protocol messages: answers go astray or hang.
      serverIt(kind)('10 parallel wrong guesses across both servers → 5 × 401 and 5 × 429', async () => {
        const replies = await Promise.all(
          Array.from({ length: 10 }, (_, i) =>
            (i % 2 === 0 ? b : c).post(
              '/auth/login',
              { username: 'dave', password: `parallel ${i}` },
              from('198.51.100.3'),
            ),
          ),
        );
        expect(replies.map((r) => r.status).sort()).toEqual([
          ...Array<number>(5).fill(401),
          ...Array<number>(5).fill(429),
        ]);
        for (const reply of replies.filter((r) => r.status === 429)) expectThrottled(reply);
      });

      it('a client address is refused after 20 failures whatever the usernames, other addresses are not', async () => {
        for (let i = 0; i < 20; i++) {
          expect(
            (await b.post('/auth/login', { username: `nobody${i}`, password: 'wrong' }, from('198.51.100.4')))
              .status,
          ).toBe(401);
        }
        expectThrottled(
          await c.post('/auth/login', { username: 'erin', password: 'erin password' }, from('198.51.100.4')),
        );
        expect(
          (await c.post('/auth/login', { username: 'erin', password: 'erin password' }, from('198.51.100.5')))
            .status,
        ).toBe(200);
      });

      it('without -http.trust_proxy, X-Forwarded-For is ignored: every failure counts on the connection’s address', async () => {
        for (let i = 0; i < 5; i++) {
          const reply = await ctx.http.post(
            '/auth/login',
            { username: 'erin', password: 'wrong' },
            from(`198.51.100.${100 + i}`),
          );
          expect(reply.status).toBe(401);
        }
        expectThrottled(
          await ctx.http.post('/auth/login', { username: 'erin', password: 'wrong' }, from('198.51.100.200')),
        );
        // Behind the proxy the owner is someone else entirely.
        expect(
          (await b.post('/auth/login', { username: 'erin', password: 'erin password' }, from('198.51.100.6')))
            .status,
        ).toBe(200);
      });
    },
  );
}

for (const kind of ALL_KINDS) {
  const reason = skipReason(kind);
  describe.skipIf(!isAvailable(kind))(
    `login throttle upgrade [${kind}]${reason === undefined ? '' : ` — ${reason}`}`,
    () => {
      it('a server started on a database set up before the throttle existed creates it, keeping every row', async () => {
        const ctx = await startAuthSuite(kind);
        let again: TestServer | undefined;
        try {
          await ctx.server.handle.close();
          await rollBackToFirstAuthVersion(ctx.sql, kind);
          const users = await ctx.sql.rows('SELECT id, username, password FROM auth_users ORDER BY id');
          again = await startTestServer(ctx.config);
          const http = client(again.url);
          expect(await ctx.sql.rows('SELECT id, username, password FROM auth_users ORDER BY id')).toEqual(
            users,
          );
          expect(await ctx.sql.count('auth_policies')).toBe(3);
          for (let i = 0; i < 5; i++)
            expect((await http.post('/auth/login', { username: 'alice', password: 'wrong' })).status).toBe(
              401,
            );
          expectThrottled(
            await http.post('/auth/login', { username: 'alice', password: ctx.alice.password }),
          );
          expect(
            (await http.post('/auth/login', { username: 'bob', password: ctx.bob.password })).status,
          ).toBe(200);
        } finally {
          await again?.handle.close();
          await ctx.sql.close();
          await ctx.db.drop();
        }
      });

      // SQLite has no roles; a PostgreSQL or MariaDB login role may lack the right to create tables.
      const withRoles = kind === 'sqlite' ? it.skip : serverIt(kind);
      withRoles('a login role that may not create the table gets one line saying what to do', async () => {
        const ctx = await startAuthSuite(kind);
        const weakRole = `rest_test_weak_${randomBytes(5).toString('hex')}`;
        try {
          await ctx.server.handle.close();
          await ctx.sql.exec('DROP TABLE auth_login_throttle');
          if (kind === 'postgres') await ctx.sql.exec('DELETE FROM migrations WHERE id = 3');
          const weak = new URL(ctx.db.url);
          weak.username = weakRole;
          if (kind === 'postgres') {
            await ctx.sql.exec(`CREATE ROLE ${weakRole} LOGIN`);
            await ctx.sql.exec(`GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${weakRole}`);
          } else if (kind === 'mysql') {
            await ctx.sql.exec(`CREATE USER '${weakRole}'@'%'`);
            await ctx.sql.exec(`GRANT SELECT ON ${ctx.db.name}.* TO '${weakRole}'@'%'`);
          }
          const config = { ...ctx.config, db: { ...ctx.config.db, url: weak.toString() } };
          await expect(startTestServer(config)).rejects.toMatchObject({
            code: 'upgrade_failed',
            message: expect.stringMatching(
              /^the database was set up by an older version of rest and lacks auth_login_throttle, which could not be created \(.+\); start rest once with a login role that may create tables$/,
            ),
          });
        } finally {
          if (kind === 'mysql') await ctx.sql.exec(`DROP USER IF EXISTS '${weakRole}'@'%'`);
          await ctx.sql.close();
          await ctx.db.drop();
          if (kind === 'postgres') await ctx.db.dropRoles([weakRole]);
        }
      });

      it('a login before setup is 409 not_setup; right after setup on another server, it counts and succeeds', async () => {
        const ctx = await startAuthSuite(kind, { noSetup: true });
        const other = await startTestServer(ctx.config);
        try {
          const reply = await ctx.http.post('/auth/login', { username: 'admin', password: 'password1' });
          expectError(reply, 409, 'not_setup');
          const setup = await client(other.url).post('/auth/setup', {});
          expect(setup.status).toBe(201);
          const admin = setup.json as { username: string; password: string };
          expect((await ctx.http.post('/auth/login', { username: 'admin', password: 'wrong' })).status).toBe(
            401,
          );
          expect((await ctx.http.post('/auth/login', admin)).status).toBe(200);
          expect(await ctx.sql.count('auth_login_throttle')).toBe(2);
        } finally {
          await other.handle.close();
          await ctx.server.handle.close();
          await ctx.sql.close();
          await ctx.db.drop();
        }
      });
    },
  );
}
