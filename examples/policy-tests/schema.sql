-- The tables the example policy tests use; the same text works on SQLite, MariaDB and PostgreSQL.
CREATE TABLE bulletins (id integer PRIMARY KEY, title varchar(100));
CREATE TABLE lounge (id integer PRIMARY KEY, title varchar(100));
CREATE TABLE audit (id integer PRIMARY KEY, title varchar(100));
CREATE TABLE notes (id integer PRIMARY KEY, user_id integer, title varchar(100));
CREATE TABLE memberships (id integer PRIMARY KEY, team_id integer, user_id integer);
CREATE TABLE tasks (id integer PRIMARY KEY, team_id integer, title varchar(100));
CREATE TABLE papers (id integer PRIMARY KEY, title varchar(100));
CREATE TABLE shares (id integer PRIMARY KEY, paper_id integer, user_id integer);
CREATE TABLE user_roles (id integer PRIMARY KEY, user_id integer, role varchar(32));
CREATE TABLE articles (id integer PRIMARY KEY, title varchar(100));
