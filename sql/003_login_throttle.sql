-- Login throttling shared by every server process on this database (SPEC §3.1; applied by
-- postgres-migrations at setup, and at server start on a database where setup ran before).
-- One row per client address and one per (username, client address); runtime/auth/rate-limiter.ts
-- reads and changes them. Times are milliseconds since the epoch.
--   window_start   when the current window of failures began (failures older than one window are void)
--   failures       failed logins in that window
--   pending        attempts comparing their password right now (counted until they end)
--   pending_since  when the latest of them began (pending attempts older than a minute are void)
CREATE TABLE auth_login_throttle (
  throttle_key text COLLATE "C" PRIMARY KEY,
  username_key text COLLATE "C",
  window_start bigint NOT NULL DEFAULT 0,
  failures integer NOT NULL DEFAULT 0,
  pending integer NOT NULL DEFAULT 0,
  pending_since bigint NOT NULL DEFAULT 0
);

CREATE INDEX auth_login_throttle_username_key ON auth_login_throttle (username_key);
