-- Sessions of built-in users (SPEC §3.3; applied by postgres-migrations at setup, and at server
-- start on a database where setup ran before). runtime/auth/sessions.ts reads and changes them.
--   auth_sessions        one row per login: the access tokens it issues carry its id (`sid`)
--     user_stamp         a digest of the user's password hash and is_admin when the session was
--                        made or last confirmed; a session whose stamp no longer matches the user
--                        (password or is_admin changed, however) is revoked
--     expires_at         when its refresh token stops working (ms since the epoch; slides on refresh)
--     revoked_at         set by logout, "log out everywhere", a password change, refresh-token reuse
--   auth_refresh_tokens  every refresh token ever issued, as a SHA-256 digest; used_at is set when
--                        it was rotated, and presenting it again revokes its session
-- Any change to a user or a session NOTIFYs `rest_users` with the user's id: every server process
-- drops its cached state of that user (runtime/auth/user-states.ts). Delivered at commit.
-- No foreign keys: a session of a deleted user is refused because the user is gone, and its rows
-- are deleted by `rest auth user remove` or, like every ended session, at the user's next login;
-- tools that map every table's relationships (Platformatic DB) stumble on keys between internal tables.
CREATE TABLE auth_sessions (
  id varchar(32) COLLATE "C" PRIMARY KEY,
  user_id integer NOT NULL,
  user_stamp varchar(64) COLLATE "C" NOT NULL,
  created_at bigint NOT NULL,
  expires_at bigint NOT NULL,
  revoked_at bigint
);

CREATE INDEX auth_sessions_user_id ON auth_sessions (user_id);

CREATE TABLE auth_refresh_tokens (
  token_hash varchar(64) COLLATE "C" PRIMARY KEY,
  session_id varchar(32) COLLATE "C" NOT NULL,
  used_at bigint
);

CREATE INDEX auth_refresh_tokens_session_id ON auth_refresh_tokens (session_id);

CREATE FUNCTION rest_notify_user() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_LEVEL = 'STATEMENT' THEN
    PERFORM pg_notify('rest_users', '');
  ELSIF TG_TABLE_NAME = 'auth_users' THEN
    PERFORM pg_notify('rest_users', OLD.id::text);
  ELSE
    PERFORM pg_notify('rest_users', OLD.user_id::text);
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER rest_users_changed
  AFTER UPDATE OR DELETE ON auth_users
  FOR EACH ROW EXECUTE FUNCTION rest_notify_user();

CREATE TRIGGER rest_users_truncated
  AFTER TRUNCATE ON auth_users
  FOR EACH STATEMENT EXECUTE FUNCTION rest_notify_user();

CREATE TRIGGER rest_sessions_changed
  AFTER UPDATE OR DELETE ON auth_sessions
  FOR EACH ROW EXECUTE FUNCTION rest_notify_user();

CREATE TRIGGER rest_sessions_truncated
  AFTER TRUNCATE ON auth_sessions
  FOR EACH STATEMENT EXECUTE FUNCTION rest_notify_user();
