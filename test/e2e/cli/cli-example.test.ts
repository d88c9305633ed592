// `rest example` on every database: notes (id, user_id, body) with a key the database generates and
// both other columns required, before auth setup or after it; when a table notes is already there,
// exit 2 and the table is left as it was.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_KINDS, isAvailable } from '../../support/databases.js';
import { openCliDatabase, suiteName, type CliDatabase } from './cli-fixtures.js';

const CREATED = [
  'created table notes (id, user_id, body); with the default policies each user reads and writes only their own notes',
  'next: serve it (rest, with the same flags), register and log in (POST /auth/register, /auth/login), then POST /notes {"body": "…"}',
  '',
].join('\n');

const EXISTS = { code: 2, stdout: '', stderr: 'rest: table notes already exists; nothing was changed\n' };

async function notes(t: CliDatabase): Promise<Record<string, unknown>[]> {
  const { rows } = await t.adapter.query({ text: 'SELECT * FROM notes ORDER BY id', values: [] });
  return rows.map((row) => ({ ...row }));
}

describe.each(ALL_KINDS)('%s', (kind) => {
  describe.skipIf(!isAvailable(kind))(suiteName('rest example', kind), () => {
    let t: CliDatabase;
    beforeAll(async () => {
      t = await openCliDatabase(kind);
    });
    afterAll(async () => {
      await t?.close();
    });

    it('creates notes on a database without auth and says what to do next', async () => {
      expect(await t.rest(['example'])).toEqual({ code: 0, stdout: CREATED, stderr: '' });
      const table = (await t.adapter.introspect()).tables.get('notes');
      expect(table?.primaryKey).toEqual(['id']);
      expect(table?.columns.map((c) => [c.name, c.type, c.nullable, c.autoIncrement])).toEqual([
        ['id', 'integer', false, true],
        ['user_id', 'integer', false, false],
        ['body', 'text', false, false],
      ]);
    });

    it('numbers the notes itself and requires an owner and a body', async () => {
      await t.adapter.exec("INSERT INTO notes (user_id, body) VALUES (7, 'first')");
      await t.adapter.exec("INSERT INTO notes (user_id, body) VALUES (8, 'second')");
      expect(await notes(t)).toEqual([
        { id: 1, user_id: 7, body: 'first' },
        { id: 2, user_id: 8, body: 'second' },
      ]);
      await expect(t.adapter.exec("INSERT INTO notes (body) VALUES ('no owner')")).rejects.toThrow();
      await expect(t.adapter.exec('INSERT INTO notes (user_id) VALUES (7)')).rejects.toThrow();
    });

    it('exits 2 when notes exists, and its rows stay', async () => {
      expect(await t.rest(['example'])).toEqual(EXISTS);
      expect(await notes(t)).toEqual([
        { id: 1, user_id: 7, body: 'first' },
        { id: 2, user_id: 8, body: 'second' },
      ]);
    });
  });

  describe.skipIf(!isAvailable(kind))(suiteName('rest example after auth setup', kind), () => {
    let t: CliDatabase;
    beforeAll(async () => {
      t = await openCliDatabase(kind);
    });
    afterAll(async () => {
      await t?.close();
    });

    it('creates notes beside the auth tables', async () => {
      expect((await t.rest(['auth', 'setup'])).code).toBe(0);
      expect(await t.rest(['example'])).toEqual({ code: 0, stdout: CREATED, stderr: '' });
      const tables = (await t.adapter.introspect()).tables;
      expect(tables.has('notes')).toBe(true);
      expect(tables.has('auth_users')).toBe(true);
    });
  });

  describe.skipIf(!isAvailable(kind))(suiteName('rest example beside a notes table of its own', kind), () => {
    let t: CliDatabase;
    beforeAll(async () => {
      t = await openCliDatabase(kind);
      await t.adapter.exec('CREATE TABLE notes (id integer PRIMARY KEY, title varchar(100))');
      await t.adapter.exec("INSERT INTO notes (id, title) VALUES (1, 'mine')");
    });
    afterAll(async () => {
      await t?.close();
    });

    it('exits 2 and leaves that table as it was', async () => {
      expect(await t.rest(['example'])).toEqual(EXISTS);
      const table = (await t.adapter.introspect()).tables.get('notes');
      expect(table?.columns.map((c) => c.name)).toEqual(['id', 'title']);
      expect(await notes(t)).toEqual([{ id: 1, title: 'mine' }]);
    });
  });
});
