-- Sign-in throttling per (email, client address), for any email typed, known or not (so the lock
-- tells nothing about whether an email is known): ten failures, each within 15 minutes of the
-- one before, lock that pair for 15 minutes; the lock expires and the count starts again; a
-- success clears the pair. Wrong passwords from one address never lock another out.
-- people.failed_sign_ins and people.sign_in_locked_until are no longer read or written.
CREATE TABLE sign_in_throttle (
  email            text NOT NULL,
  client           text NOT NULL,
  failures         integer NOT NULL,
  last_failure_at  timestamptz NOT NULL,
  locked_until     timestamptz,
  PRIMARY KEY (email, client)
);
CREATE INDEX sign_in_throttle_age ON sign_in_throttle (last_failure_at);

-- The pending deliveries of an endpoint, counted to rank a new one after them (fair order).
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (endpoint_id) WHERE status = 'pending';

-- When a record was made, and (clients) when an authorization last used it: an unused dynamic
-- client registration is deleted (shared/oauth/records.ts).
ALTER TABLE oauth_records
  ADD COLUMN created_at timestamptz NOT NULL DEFAULT now(),
  ADD COLUMN used_at timestamptz;
