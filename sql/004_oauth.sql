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

-- A membership the operator adds is pending until the person accepts it with the invitation code
-- `members add` printed (kept as a digest, valid 7 days), when signing up or on the consent page:
-- knowing someone's email is not enough to act for their account. Links made before this
-- migration are pending too; `members add` again gives them a code.
ALTER TABLE memberships
  ADD COLUMN invitation_sha256 bytea UNIQUE,
  ADD COLUMN invitation_expires_at timestamptz,
  ADD COLUMN accepted_at timestamptz;

-- Sign-in throttling per person: every attempt is counted before the password is checked; after
-- 10 in a row without success, sign-in is refused for 15 minutes (the first wrong password after
-- that locks it again); a right one resets the count. `people unlock` (operator) clears it.
ALTER TABLE people
  ADD COLUMN failed_sign_ins integer NOT NULL DEFAULT 0,
  ADD COLUMN sign_in_locked_until timestamptz;

-- The API account a grant acts for, chosen by the person on the consent page, read on every
-- request made with the grant's tokens. Removing the membership removes the binding, and with it
-- every token's right to act.
CREATE TABLE oauth_grant_accounts (
  grant_id    text PRIMARY KEY,
  account_id  text NOT NULL,
  person_id   text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (account_id, person_id) REFERENCES memberships (account_id, person_id) ON DELETE CASCADE
);
CREATE INDEX oauth_grant_accounts_membership ON oauth_grant_accounts (account_id, person_id);

-- Keys for the provider's signed cookies, one per installation, shared by every web process.
INSERT INTO service_secrets (name, value)
VALUES ('oauth_cookies', sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8')));
