-- When a grant's access tokens were last used on /v1 (to the minute), for the person's page of
-- connected programs.
ALTER TABLE oauth_grant_accounts ADD COLUMN last_used_at timestamptz;
