-- The OAuth authorization server's state (oidc-provider's models: clients, sessions,
-- interactions, grants, codes, tokens), in one table. Only the SHA-256 of each id is kept, so no
-- usable code or token sits in the database; the payload never holds the id either.
CREATE TABLE oauth_records (
  model        text NOT NULL,
  id_sha256    bytea NOT NULL,
  payload      jsonb NOT NULL,
  grant_id     text,
  uid          text,
  expires_at   timestamptz,
  consumed_at  timestamptz,
  PRIMARY KEY (model, id_sha256)
);
CREATE INDEX oauth_records_grant ON oauth_records (grant_id) WHERE grant_id IS NOT NULL;
CREATE INDEX oauth_records_uid ON oauth_records (uid) WHERE uid IS NOT NULL;
CREATE INDEX oauth_records_expiry ON oauth_records (expires_at) WHERE expires_at IS NOT NULL;

-- The API account a grant acts for, chosen by the person on the consent page. Every token of the
-- grant, refreshed ones included, acts for this account.
CREATE TABLE oauth_grant_accounts (
  grant_id    text PRIMARY KEY,
  account_id  text NOT NULL REFERENCES accounts (id),
  person_id   text NOT NULL REFERENCES people (id),
  created_at  timestamptz NOT NULL DEFAULT now()
);

-- Keys for the provider's signed cookies, one per installation, shared by every web process.
INSERT INTO service_secrets (name, value)
VALUES ('oauth_cookies', sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8')));
