// Bench data: deterministic `items` rows spread evenly over the users, loaded into a fresh
// PostgreSQL database (random name; `drop()` removes it and its request role) and into a SQLite file;
// for the team membership workload also `teams`, `members` and `team_items` (PostgreSQL only).

import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { requestRoleName } from '../runtime/rls/request-role.js';

export interface DataShape {
  readonly rows: number;
  readonly users: number;
}

export const FULL_DATA: DataShape = { rows: 200_000, users: 1_000 };
export const SMOKE_DATA: DataShape = { rows: 5_000, users: 100 };

/** Rows a read returns: the owner read's `WHERE user_id = $1 ORDER BY id LIMIT 20`. */
export const PAGE_ROWS = 20;

/** The team membership workload: `team_items` rows spread over teams, users in 1–2 teams. */
export interface TeamShape {
  readonly rows: number;
  readonly teams: number;
  readonly users: number;
}

export const FULL_TEAM: TeamShape = { rows: 200_000, teams: 1_000, users: 5_000 };
export const SMOKE_TEAM: TeamShape = { rows: 5_000, teams: 25, users: 125 };
/** Share of the users who are in a second team (the others are in one). */
export const SECOND_TEAM_SHARE = 0.5;

export interface ItemRow {
  readonly id: number;
  readonly user_id: number;
  readonly title: string;
  readonly amount: number;
  readonly done: boolean;
  readonly created_at: string;
}

export interface TeamItemRow {
  readonly id: number;
  readonly team_id: number;
  readonly title: string;
  readonly amount: number;
  readonly done: boolean;
  readonly created_at: string;
}

export interface Membership {
  readonly user_id: number;
  readonly team_id: number;
}

export interface TeamData {
  readonly items: readonly TeamItemRow[];
  readonly members: readonly Membership[];
}

export interface BenchTeamData {
  readonly shape: TeamShape;
  readonly memberships: number;
  /** The ids each user must see through their teams, ascending: the first PAGE_ROWS. */
  readonly firstIds: ReadonlyMap<number, readonly number[]>;
  readonly loadMillis: number;
}

export interface BenchData {
  readonly shape: DataShape;
  /** The ids each user must see, ascending: their first PAGE_ROWS rows. */
  readonly firstIds: ReadonlyMap<number, readonly number[]>;
  /** Loaded into the PostgreSQL database only; undefined when the team workload is off. */
  readonly team: BenchTeamData | undefined;
  readonly pgDatabase: string;
  readonly pgUrl: string;
  readonly sqliteFile: string;
  readonly sqliteUrl: string;
  readonly loadMillis: { readonly postgres: number; readonly sqlite: number };
  drop(): Promise<void>;
}

/** mulberry32: a tiny seeded PRNG, so every run (and every database) gets the same rows. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Every user owns exactly rows/users rows (the remainder goes to the first users), shuffled over ids. */
export function generateItems(shape: DataShape, seed = 7): readonly ItemRow[] {
  if (shape.users < 1 || shape.rows < shape.users * PAGE_ROWS) {
    throw new Error(
      `bench data needs at least ${PAGE_ROWS} rows per user (${shape.rows} rows over ${shape.users} users)`,
    );
  }
  const random = seededRandom(seed);
  const owners = shuffledOwners(shape.rows, shape.users, random);
  const start = Date.UTC(2024, 0, 1);
  return owners.map((user_id, i) => ({
    id: i + 1,
    user_id,
    title: `item ${i + 1} of user ${user_id}`,
    amount: Math.floor(random() * 100_000),
    done: random() < 0.3,
    created_at: new Date(start + i * 60_000).toISOString(),
  }));
}

const ZERO_ROWS = 0;

/** How many rows `userId` owns in generateItems(shape): rows/users, one more for the first rows%users users. */
export function ownedRows(shape: DataShape, userId: number): number {
  if (!Number.isInteger(userId) || userId < 1 || userId > shape.users) return ZERO_ROWS;
  return Math.floor(shape.rows / shape.users) + (userId <= shape.rows % shape.users ? 1 : ZERO_ROWS);
}

/** Shuffled owners: every one of `owners` gets exactly rows/owners rows (the remainder to the first). */
function shuffledOwners(rows: number, owners: number, random: () => number): number[] {
  const out = Array.from({ length: rows }, (_, i) => (i % owners) + 1);
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    const tmp = out[i] as number;
    out[i] = out[j] as number;
    out[j] = tmp;
  }
  return out;
}

/**
 * `team_items` spread evenly over the teams (shuffled over ids), and memberships: user u is in
 * team ((u - 1) mod teams) + 1, so every team has users/teams members, and a seeded
 * SECOND_TEAM_SHARE of the users is also in one other team.
 */
export function generateTeamData(shape: TeamShape, seed = 17): TeamData {
  if (shape.teams < 2 || shape.users < shape.teams || shape.rows < shape.teams * PAGE_ROWS) {
    throw new Error(
      `team data needs at least 2 teams, a member per team and ${PAGE_ROWS} rows per team ` +
        `(${shape.rows} rows, ${shape.teams} teams, ${shape.users} users)`,
    );
  }
  const random = seededRandom(seed);
  const start = Date.UTC(2024, 0, 1);
  const items = shuffledOwners(shape.rows, shape.teams, random).map((team_id, i) => ({
    id: i + 1,
    team_id,
    title: `item ${i + 1} of team ${team_id}`,
    amount: Math.floor(random() * 100_000),
    done: random() < 0.3,
    created_at: new Date(start + i * 60_000).toISOString(),
  }));
  const members: Membership[] = [];
  for (let user_id = 1; user_id <= shape.users; user_id++) {
    const first = ((user_id - 1) % shape.teams) + 1;
    members.push({ user_id, team_id: first });
    if (random() < SECOND_TEAM_SHARE) {
      // Any other team, uniformly.
      const other = ((first - 1 + 1 + Math.floor(random() * (shape.teams - 1))) % shape.teams) + 1;
      members.push({ user_id, team_id: other });
    }
  }
  return { items, members };
}

/** The first PAGE_ROWS ids, ascending, of the rows of each user's teams. */
export function teamFirstIdsByUser(data: TeamData): ReadonlyMap<number, readonly number[]> {
  const byTeam = new Map<number, number[]>();
  for (const item of data.items) {
    const ids = byTeam.get(item.team_id) ?? [];
    if (ids.length < PAGE_ROWS) ids.push(item.id);
    byTeam.set(item.team_id, ids);
  }
  const teamsOf = new Map<number, number[]>();
  for (const m of data.members) teamsOf.set(m.user_id, [...(teamsOf.get(m.user_id) ?? []), m.team_id]);
  const out = new Map<number, readonly number[]>();
  for (const [user, teams] of teamsOf) {
    const ids = teams.flatMap((t) => byTeam.get(t) ?? []).sort((a, b) => a - b);
    out.set(user, ids.slice(0, PAGE_ROWS));
  }
  return out;
}

export function firstIdsByUser(items: readonly ItemRow[]): ReadonlyMap<number, readonly number[]> {
  const byUser = new Map<number, number[]>();
  for (const item of items) {
    const ids = byUser.get(item.user_id) ?? [];
    if (ids.length < PAGE_ROWS) ids.push(item.id);
    byUser.set(item.user_id, ids);
  }
  return byUser;
}

const PG_DDL = `
CREATE TABLE items (
  id integer GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  user_id integer NOT NULL,
  title varchar(128) NOT NULL,
  amount integer NOT NULL,
  done boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX items_user_id_idx ON items (user_id);`;

/** The team pattern of the README: the policy reads `members` by `user_id`, `team_items` by `team_id`. */
const PG_TEAM_DDL = `
CREATE TABLE teams (
  id integer PRIMARY KEY,
  name varchar(64) NOT NULL
);
CREATE TABLE members (
  user_id integer NOT NULL,
  team_id integer NOT NULL REFERENCES teams (id),
  PRIMARY KEY (user_id, team_id)
);
CREATE INDEX members_team_id_idx ON members (team_id);
CREATE TABLE team_items (
  id integer GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
  team_id integer NOT NULL REFERENCES teams (id),
  title varchar(128) NOT NULL,
  amount integer NOT NULL,
  done boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX team_items_team_id_idx ON team_items (team_id);`;

const SQLITE_DDL = `
CREATE TABLE items (
  id INTEGER PRIMARY KEY,
  user_id INTEGER NOT NULL,
  title VARCHAR(128) NOT NULL,
  amount INTEGER NOT NULL,
  done BOOLEAN NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX items_user_id_idx ON items (user_id);`;

export function withDatabaseName(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/** One connection for `fn`, always closed. */
export async function withPgClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Column arrays through `unnest`: one statement per chunk, values bound, ~10× faster than row VALUES. */
async function loadPostgres(url: string, items: readonly ItemRow[]): Promise<void> {
  await withPgClient(url, async (c) => {
    await c.query(PG_DDL);
    const chunk = 25_000;
    for (let start = 0; start < items.length; start += chunk) {
      const part = items.slice(start, start + chunk);
      await c.query(
        `INSERT INTO items (id, user_id, title, amount, done, created_at)
         SELECT * FROM unnest($1::int[], $2::int[], $3::text[], $4::int[], $5::bool[], $6::timestamptz[])`,
        [
          part.map((r) => r.id),
          part.map((r) => r.user_id),
          part.map((r) => r.title),
          part.map((r) => r.amount),
          part.map((r) => r.done),
          part.map((r) => r.created_at),
        ],
      );
    }
    // Explicit ids leave the identity sequence at 1: move it past them so POSTs get fresh ids.
    await c.query(`SELECT setval(pg_get_serial_sequence('items', 'id'), (SELECT max(id) FROM items))`);
    // Hint bits and the visibility map are set now, not during the first timed round.
    await c.query('VACUUM (ANALYZE) items');
  });
}

async function loadPostgresTeams(url: string, shape: TeamShape, data: TeamData): Promise<void> {
  await withPgClient(url, async (c) => {
    await c.query(PG_TEAM_DDL);
    await c.query(
      `INSERT INTO teams (id, name) SELECT i, 'team ' || i FROM generate_series(1, $1::int) AS i`,
      [shape.teams],
    );
    await c.query(`INSERT INTO members (user_id, team_id) SELECT * FROM unnest($1::int[], $2::int[])`, [
      data.members.map((m) => m.user_id),
      data.members.map((m) => m.team_id),
    ]);
    const chunk = 25_000;
    for (let start = 0; start < data.items.length; start += chunk) {
      const part = data.items.slice(start, start + chunk);
      await c.query(
        `INSERT INTO team_items (id, team_id, title, amount, done, created_at)
         SELECT * FROM unnest($1::int[], $2::int[], $3::text[], $4::int[], $5::bool[], $6::timestamptz[])`,
        [
          part.map((r) => r.id),
          part.map((r) => r.team_id),
          part.map((r) => r.title),
          part.map((r) => r.amount),
          part.map((r) => r.done),
          part.map((r) => r.created_at),
        ],
      );
    }
    await c.query(
      `SELECT setval(pg_get_serial_sequence('team_items', 'id'), (SELECT max(id) FROM team_items))`,
    );
    await c.query('VACUUM (ANALYZE) teams, members, team_items');
  });
}

function loadSqlite(file: string, items: readonly ItemRow[]): void {
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    db.exec(SQLITE_DDL);
    const insert = db.prepare(
      'INSERT INTO items (id, user_id, title, amount, done, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    );
    db.transaction(() => {
      for (const r of items) insert.run(r.id, r.user_id, r.title, r.amount, r.done ? 1 : 0, r.created_at);
    })();
    db.exec('ANALYZE');
  } finally {
    db.close();
  }
}

/** Creates `rest_bench_<random>` next to the admin URL's database and a SQLite file in `dir`. */
export async function generateBenchData(options: {
  readonly pgAdminUrl: string;
  readonly dir: string;
  readonly shape: DataShape;
  /** The team membership tables, PostgreSQL only; undefined leaves them out. */
  readonly team?: TeamShape | undefined;
}): Promise<BenchData> {
  const items = generateItems(options.shape);
  const teamShape = options.team;
  const pgDatabase = `rest_bench_${randomBytes(6).toString('hex')}`;
  const pgUrl = withDatabaseName(options.pgAdminUrl, pgDatabase);
  await withPgClient(options.pgAdminUrl, (c) => c.query(`CREATE DATABASE ${pgDatabase}`));
  // A `-db.rls on` server creates its (cluster-wide) request role for this database: dropped with it.
  const drop = (): Promise<void> =>
    withPgClient(options.pgAdminUrl, async (c) => {
      await c.query(`DROP DATABASE IF EXISTS ${pgDatabase} WITH (FORCE)`);
      await c.query(`DROP ROLE IF EXISTS ${requestRoleName(pgDatabase)}`);
    });
  try {
    const t0 = performance.now();
    await loadPostgres(pgUrl, items);
    const t1 = performance.now();
    const sqliteFile = join(options.dir, 'bench.db');
    loadSqlite(sqliteFile, items);
    const t2 = performance.now();
    let team: BenchTeamData | undefined;
    if (teamShape !== undefined) {
      const teamData = generateTeamData(teamShape);
      await loadPostgresTeams(pgUrl, teamShape, teamData);
      team = {
        shape: teamShape,
        memberships: teamData.members.length,
        firstIds: teamFirstIdsByUser(teamData),
        loadMillis: performance.now() - t2,
      };
    }
    return {
      shape: options.shape,
      firstIds: firstIdsByUser(items),
      team,
      pgDatabase,
      pgUrl,
      sqliteFile,
      sqliteUrl: `sqlite://${sqliteFile}`,
      loadMillis: { postgres: t1 - t0, sqlite: t2 - t1 },
      drop,
    };
  } catch (e) {
    await drop();
    throw e;
  }
}
