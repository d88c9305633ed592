// -db.pooler and -db.listen_url (docs/operations.md "Behind a transaction pooler"): flag, environment
// and YAML file, what they accept, and the URL a session of its own is opened on.

import { describe, expect, it } from 'vitest';
import { loadConfig, type ConfigSources } from '../../../cli/config/load-config.js';
import { migrationUrlOf } from '../../../runtime/auth/setup.js';
import { sessionUrlOf } from '../../../runtime/config.js';
import { errorOf } from '../../support/thrown.js';

const PG = 'postgres://rest@pooler:6432/app';
const DIRECT = 'postgres://rest@db:5432/app';
const load = (sources: Partial<ConfigSources>) => loadConfig({ flags: {}, env: {}, ...sources });

describe('-db.pooler and -db.listen_url', () => {
  it('are read from flags, the environment and the YAML file, flags first', () => {
    const fromFlags = load({ flags: { 'db.url': PG, 'db.pooler': 'transaction', 'db.listen_url': DIRECT } });
    expect(fromFlags.db).toMatchObject({ pooler: 'transaction', listenUrl: DIRECT });
    const fromEnv = load({
      env: { REST_DB_URL: PG, REST_DB_POOLER: 'transaction', REST_DB_LISTEN_URL: DIRECT },
    });
    expect(fromEnv.db).toMatchObject({ pooler: 'transaction', listenUrl: DIRECT });
    const readFile = () => `db: {url: '${PG}', pooler: transaction, listen_url: '${DIRECT}'}`;
    const fromFile = load({ flags: { config: 'rest.yml' }, readFile });
    expect(fromFile.db).toMatchObject({ pooler: 'transaction', listenUrl: DIRECT });
    const overridden = load({
      flags: { config: 'rest.yml', 'db.pooler': 'none' },
      env: { REST_DB_POOLER: 'transaction' },
      readFile,
    });
    expect(overridden.db.pooler).toBeUndefined();
  });

  it('default to a direct connection that is also the session URL', () => {
    const config = load({ flags: { 'db.url': PG } });
    expect(config.db.pooler).toBeUndefined();
    expect(config.db.listenUrl).toBeUndefined();
    expect(sessionUrlOf(config.db)).toBe(PG);
  });

  it('through a pooler, LISTEN and migrations use -db.listen_url; without it changes are polled and setup refuses', () => {
    const withListen = load({ flags: { 'db.url': PG, 'db.pooler': 'transaction', 'db.listen_url': DIRECT } });
    expect(sessionUrlOf(withListen.db)).toBe(DIRECT);
    expect(migrationUrlOf(withListen)).toBe(DIRECT);
    const without = load({ flags: { 'db.url': PG, 'db.pooler': 'transaction' } });
    expect(sessionUrlOf(without.db)).toBeUndefined();
    const e = errorOf(() => migrationUrlOf(without));
    expect([e.code, e.exitCode]).toEqual(['pooler_needs_listen_url', 1]);
    expect(e.message).toContain('-db.listen_url');
  });

  it.each([
    [{ 'db.url': PG, 'db.pooler': 'session' }, "db.pooler 'session' is not transaction or none"],
    [
      { 'db.url': 'sqlite://./x.db', 'db.pooler': 'transaction' },
      'db.pooler and db.listen_url are for PostgreSQL',
    ],
    [
      { 'db.url': 'mysql://root@h/db', 'db.listen_url': DIRECT },
      'db.pooler and db.listen_url are for PostgreSQL',
    ],
    [{ 'db.url': PG, 'db.listen_url': 'mysql://root@h/db' }, 'db.listen_url must be a postgres:// URL'],
  ])('refuses %j with one line', (flags, message) => {
    const e = errorOf(() => load({ flags }));
    expect(e.exitCode).toBe(1);
    expect(e.message).toContain(message);
  });
});
