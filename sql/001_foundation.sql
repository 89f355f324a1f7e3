-- Accounts, people, API keys, datasets, idempotency records and metered usage.

CREATE TABLE accounts (
  id          text PRIMARY KEY,
  name        text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);

-- A person signs in on the OAuth consent pages; the operator links people to accounts.
CREATE TABLE people (
  id             text PRIMARY KEY,
  email          text NOT NULL UNIQUE CHECK (email = lower(email)),
  password_hash  text,
  created_at     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE memberships (
  account_id  text NOT NULL REFERENCES accounts (id),
  person_id   text NOT NULL REFERENCES people (id),
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, person_id)
);
CREATE INDEX memberships_person ON memberships (person_id);

-- Only the SHA-256 digest of a key is stored; the label is its first 12 characters.
CREATE TABLE api_keys (
  id             text PRIMARY KEY,
  account_id     text NOT NULL REFERENCES accounts (id),
  mode           text NOT NULL CHECK (mode IN ('test', 'live')),
  label          text NOT NULL,
  secret_sha256  bytea NOT NULL UNIQUE,
  created_at     timestamptz NOT NULL DEFAULT now(),
  last_used_at   timestamptz,
  revoked_at     timestamptz
);
CREATE INDEX api_keys_account ON api_keys (account_id, created_at);

CREATE TABLE datasets (
  id                 text PRIMARY KEY,
  account_id         text NOT NULL REFERENCES accounts (id),
  mode               text NOT NULL CHECK (mode IN ('test', 'live')),
  external_ref       text NOT NULL,
  name               text,
  active_version_id  text,
  created_at         timestamptz NOT NULL DEFAULT clock_timestamp(),
  CONSTRAINT datasets_external_ref_unique UNIQUE (account_id, mode, external_ref)
);
CREATE INDEX datasets_newest_first ON datasets (account_id, mode, created_at DESC, id DESC);

-- One row per (account, mode, Idempotency-Key): 'running' while the first request is in flight
-- (its lease is extended while it runs), then 'done' with the response to replay. An answer that
-- is not kept (a 5xx, or one given before the body was read) deletes the row: the next try runs.
CREATE TABLE idempotency_keys (
  account_id        text NOT NULL,
  mode              text NOT NULL,
  key               text NOT NULL,
  state             text NOT NULL CHECK (state IN ('running', 'done')),
  owner             text NOT NULL,
  lease_expires_at  timestamptz NOT NULL,
  fingerprint       bytea,
  response_status   integer,
  response_headers  jsonb,
  response_body     bytea,
  created_at        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (account_id, mode, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

-- Live-mode metered usage, added to in batches by each process.
CREATE TABLE usage_counters (
  account_id  text NOT NULL REFERENCES accounts (id),
  day         date NOT NULL,
  metric      text NOT NULL,
  quantity    bigint NOT NULL,
  PRIMARY KEY (account_id, day, metric)
);
