// The README's quick start as a user runs it, with the built binary and real HTTP: `auth setup`,
// `example`, serve, two users register and log in, alice writes a note, bob cannot see it. On
// SQLite it runs in a fresh directory on the default database (./rest.db); on PostgreSQL (native
// RLS) and MariaDB with -db.url.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DialectName } from '../../../compiler/types.js';
import {
  ALL_KINDS,
  createTestDatabase,
  isAvailable,
  skipReason,
  type TestDatabase,
} from '../../support/databases.js';
import { client } from '../../support/http.js';
import { runRest, spawnRest, type RestProcess } from './rest-process.js';

const SECRET = 'a quick start secret of more than thirty-two bytes';

const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

for (const kind of ALL_KINDS) {
  const reason = skipReason(kind);
  describe.skipIf(!isAvailable(kind))(
    `the quick start [${kind}]${reason === undefined ? '' : ` — ${reason}`}`,
    () => {
      let dir: string;
      let db: TestDatabase | undefined;
      let server: RestProcess | undefined;
      /** The database flag: none on SQLite, where the default ./rest.db in the fresh directory is used. */
      let dbArgs: string[];

      beforeAll(async () => {
        dir = mkdtempSync(join(tmpdir(), 'rest-quick-start-'));
        db = kind === 'sqlite' ? undefined : await createTestDatabase(kind as Exclude<DialectName, 'sqlite'>);
        dbArgs = db === undefined ? [] : ['-db.url', db.url];
      });
      afterAll(async () => {
        await server?.stop();
        await db?.drop();
        rmSync(dir, { recursive: true, force: true });
      });

      it('ends with a note alice reads and bob does not', async () => {
        const options = { cwd: dir, env: { REST_AUTH_SECRET: SECRET } };
        const setup = await runRest([...dbArgs, 'auth', 'setup'], options);
        expect(setup.code, setup.stderr).toBe(0);
        expect(setup.stdout).toMatch(/^username: admin\npassword: \S+\n$/);

        const example = await runRest([...dbArgs, 'example'], options);
        expect([example.code, example.stderr]).toEqual([0, '']);
        expect(example.stdout).toMatch(/^created table notes \(id, user_id, body\);.*\nnext: serve it/);
        const again = await runRest([...dbArgs, 'example'], options);
        expect([again.code, again.stderr]).toEqual([
          2,
          'rest: table notes already exists; nothing was changed\n',
        ]);

        server = spawnRest([...dbArgs, '-addr', '127.0.0.1:0'], options);
        const http = client(await server.started());
        const users: Record<string, { id: number; token: string }> = {};
        for (const name of ['alice', 'bob']) {
          const credentials = { username: name, password: `${name}-secret-1` };
          const registered = await http.post('/auth/register', credentials);
          expect(registered.status).toBe(201);
          const login = await http.post('/auth/login', credentials);
          expect(login.status).toBe(200);
          users[name] = {
            id: (registered.json as { id: number }).id,
            token: (login.json as { token: string }).token,
          };
        }
        const alice = users['alice'];
        const bob = users['bob'];
        if (alice === undefined || bob === undefined) throw new Error('both users logged in');

        const written = await http.post('/notes', { body: 'hello from alice' }, bearer(alice.token));
        const note = { id: 1, user_id: alice.id, body: 'hello from alice' };
        expect([written.status, written.json]).toEqual([201, note]);
        const read = async (token: string) => {
          const reply = await http.get('/notes', bearer(token));
          return [reply.status, reply.json];
        };
        expect(await read(alice.token)).toEqual([200, [note]]);
        expect(await read(bob.token)).toEqual([200, []]);
      });
    },
  );
}
