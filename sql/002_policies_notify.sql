-- Policy changes reach every server process within moments (SPEC §4.6): a statement-level trigger
-- NOTIFYs channel `rest_policies` when auth_policies changes, however it was changed (API, CLI,
-- psql); servers LISTEN on it and reload their compiled policies. NOTIFY is delivered at commit.
CREATE FUNCTION rest_notify_policies() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('rest_policies', '');
  RETURN NULL;
END;
$$;

CREATE TRIGGER rest_policies_changed
  AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON auth_policies
  FOR EACH STATEMENT EXECUTE FUNCTION rest_notify_policies();
