// The four contenders of the bench and how each one is started: the hand-written baseline and
// `rest` on PostgreSQL (-db.rls off / on) and on SQLite, all as real server processes.

import type { ContenderId } from './report-model.js';
import type { ServerCommand } from './server-process.js';

export interface ContenderSpec {
  readonly id: ContenderId;
  readonly label: string;
  readonly description: string;
  readonly database: 'postgres' | 'sqlite';
  /** Served by the write workload (the baseline has one read route only). */
  readonly writes: boolean;
  command(dbUrl: string, port: number): ServerCommand;
}

export interface ContenderPaths {
  readonly baselineScript: string;
  readonly restCli: string;
  readonly secret: string;
}

/** `rest serve` on `dbUrl` at `port`, with `-db.rls` when given and any `extra` flags after. */
export function restCommand(
  paths: Pick<ContenderPaths, 'restCli' | 'secret'>,
  label: string,
  rls: 'on' | 'off' | undefined,
  extra: readonly string[] = [],
) {
  return (dbUrl: string, port: number): ServerCommand => ({
    label,
    args: [
      paths.restCli,
      'serve',
      '-db.url',
      dbUrl,
      '-addr',
      `127.0.0.1:${port}`,
      '-auth.secret',
      paths.secret,
      ...(rls === undefined ? [] : ['-db.rls', rls]),
      ...extra,
    ],
    env: {},
    port,
  });
}

export function contenderSpecs(paths: ContenderPaths): readonly ContenderSpec[] {
  return [
    {
      id: 'baseline',
      label: 'baseline',
      description:
        'hand-written express 5 + pg Pool (10 connections) + jose HS256 verify on every request, unnamed statement (bench/baseline-server.ts)',
      database: 'postgres',
      writes: false,
      command: (dbUrl, port) => ({
        label: 'baseline',
        args: [paths.baselineScript, '--db-url', dbUrl, '--port', String(port)],
        env: { BENCH_SECRET: paths.secret },
        port,
      }),
    },
    {
      id: 'rest-pg-portable',
      label: 'rest PostgreSQL rls=off',
      description: '`rest serve -db.rls off`: the portable path (policy compiled to a WHERE predicate)',
      database: 'postgres',
      writes: true,
      command: restCommand(paths, 'rest PostgreSQL rls=off', 'off'),
    },
    {
      id: 'rest-pg-rls',
      label: 'rest PostgreSQL rls=on',
      description: '`rest serve -db.rls on`: PostgreSQL-native row-level security',
      database: 'postgres',
      writes: true,
      command: restCommand(paths, 'rest PostgreSQL rls=on', 'on'),
    },
    {
      id: 'rest-sqlite',
      label: 'rest SQLite',
      description: '`rest serve` on a SQLite file (WAL) holding the same rows: the portable path in-process',
      database: 'sqlite',
      writes: true,
      command: restCommand(paths, 'rest SQLite', undefined),
    },
  ];
}
