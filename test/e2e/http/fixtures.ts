// The tables every HTTP matrix suite serves, in each database's own DDL.

import type { DialectName } from '../../../compiler/types.js';

export const FIXTURE_DDL: Readonly<Record<DialectName, readonly string[]>> = {
  postgres: [
    `CREATE TABLE items (id serial PRIMARY KEY, title varchar(100) NOT NULL UNIQUE, qty integer, price numeric(10,2),
       done boolean NOT NULL DEFAULT false, meta jsonb, due date, created_at timestamptz, note text)`,
    'CREATE TABLE tags (name varchar(50) PRIMARY KEY, weight integer)',
    'CREATE TABLE pairs (a integer NOT NULL, b integer NOT NULL, label varchar(20), PRIMARY KEY (a, b))',
    'CREATE TABLE logs (msg varchar(50))',
    `CREATE TABLE kinds (id serial PRIMARY KEY, big bigint, small smallint, ratio double precision, amount numeric(20,6),
       flag boolean, doc json, docb jsonb, day date, at timestamptz, local_at timestamp, label text)`,
    'CREATE TABLE "we""ird" ("sp ace" integer PRIMARY KEY, "a""b" varchar(10))',
  ],
  mysql: [
    `CREATE TABLE items (id int AUTO_INCREMENT PRIMARY KEY, title varchar(100) NOT NULL UNIQUE, qty int, price decimal(10,2),
       done boolean NOT NULL DEFAULT false, meta json, due date, created_at datetime(3), note text)`,
    'CREATE TABLE tags (name varchar(50) PRIMARY KEY, weight int)',
    'CREATE TABLE pairs (a int NOT NULL, b int NOT NULL, label varchar(20), PRIMARY KEY (a, b))',
    'CREATE TABLE logs (msg varchar(50))',
    `CREATE TABLE kinds (id int AUTO_INCREMENT PRIMARY KEY, big bigint, small smallint, ratio double, amount decimal(20,6),
       flag boolean, doc json, docb json, day date, at datetime(3), local_at datetime(3), label text)`,
    'CREATE TABLE `we"ird` (`sp ace` int PRIMARY KEY, `a"b` varchar(10))',
  ],
  sqlite: [
    `CREATE TABLE items (id INTEGER PRIMARY KEY AUTOINCREMENT, title varchar(100) NOT NULL UNIQUE, qty INTEGER,
       price DECIMAL(10,2), done BOOLEAN NOT NULL DEFAULT 0, meta JSON, due DATE, created_at TIMESTAMP, note TEXT)`,
    'CREATE TABLE tags (name varchar(50) PRIMARY KEY, weight INTEGER)',
    'CREATE TABLE pairs (a INTEGER NOT NULL, b INTEGER NOT NULL, label varchar(20), PRIMARY KEY (a, b))',
    'CREATE TABLE logs (msg varchar(50))',
    `CREATE TABLE kinds (id INTEGER PRIMARY KEY AUTOINCREMENT, big BIGINT, small SMALLINT, ratio DOUBLE, amount DECIMAL(20,6),
       flag BOOLEAN, doc JSON, docb JSON, day DATE, at TIMESTAMP, local_at DATETIME, label TEXT)`,
    'CREATE TABLE "we""ird" ("sp ace" INTEGER PRIMARY KEY, "a""b" varchar(10))',
  ],
};
