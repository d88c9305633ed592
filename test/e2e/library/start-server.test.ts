// The library API as a program uses it: `import { … } from 'rest'` resolves the built package
// (package.json "exports"), starts a server over a database and serves real HTTP.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import * as rest from 'rest';

const dir = mkdtempSync(join(tmpdir(), 'rest-library-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A logger whose lines the test reads. */
function capturingLogger(): { logger: Logger; lines: () => Array<Record<string, unknown>> } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return { logger: pino(sink), lines: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe("import from 'rest'", () => {
  it('exports the compiler: a policy parses and compiles to a WHERE predicate', () => {
    const expr = rest.parsePolicy('user_id = auth_user.id');
    expect(rest.printPolicy(expr)).toBe('user_id = auth_user.id');
  });

  it('startServer serves a database, logs its start line and closes', async () => {
    const { logger, lines } = capturingLogger();
    const server = await rest.startServer(
      { addr: '127.0.0.1:0', db: { url: `sqlite://${join(dir, 'lib.db')}` } },
      { logger },
    );
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const health = (await (await fetch(`${server.url}/`)).json()) as Record<string, unknown>;
      expect(health).toMatchObject({ status: 'ok', database: 'sqlite', auth: false });
      expect(lines().some((l) => String(l['msg']).startsWith(`listening on ${server.url} `))).toBe(true);
    } finally {
      await server.close();
    }
    await expect(fetch(`${server.url}/`)).rejects.toThrow();
  });

  it('refuses bad settings with the config file rules, naming the setting', async () => {
    await expect(rest.startServer({ db: { url: 'nope://x' } })).rejects.toMatchObject({
      code: 'invalid_db_url',
    });
    await expect(rest.startServer({ dbb: {} } as rest.ServerSettings)).rejects.toThrow(
      'startServer settings: unknown setting dbb',
    );
    await expect(
      rest.startServer({ auth: { secret: 'short' }, db: { url: `sqlite://${join(dir, 'x.db')}` } }),
    ).rejects.toBeInstanceOf(rest.RestError);
  });
});
