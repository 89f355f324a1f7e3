-- The people's dashboard (/dashboard). A session per sign-in, kept here so that signing out ends
-- it on the server: the cookie holds a random token and only its SHA-256 is stored; a cookie
-- whose row is gone (signed out, expired) opens nothing.
CREATE TABLE dashboard_sessions (
  token_sha256  bytea PRIMARY KEY,
  person_id     text NOT NULL REFERENCES people (id) ON DELETE CASCADE,
  created_at    timestamptz NOT NULL DEFAULT now(),
  expires_at    timestamptz NOT NULL
);
CREATE INDEX dashboard_sessions_person ON dashboard_sessions (person_id);
CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions (expires_at);

-- What a person last chose to look at (one account, one mode), remembered across sessions. No
-- row: the dashboard opens on their first account in test mode.
CREATE TABLE dashboard_choices (
  person_id   text PRIMARY KEY REFERENCES people (id) ON DELETE CASCADE,
  account_id  text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  mode        text NOT NULL CHECK (mode IN ('test', 'live')),
  chosen_at   timestamptz NOT NULL DEFAULT now()
);
