-- The column rule of a policy (SPEC §2, §4.7; docs/policy-language.md "Columns"): NULL or empty
-- means every column. Rows stored before keep NULL, so they keep meaning what they meant.
ALTER TABLE auth_policies ADD COLUMN columns varchar(256);
