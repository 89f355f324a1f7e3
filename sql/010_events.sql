-- Events and webhooks. An event is written in the transaction of the change it reports (the
-- outbox); a relay in the workers fans each new event out to the endpoints subscribed to it, as
-- deliveries with a pg-boss job each, and marks it dispatched. Every attempt is kept.
CREATE TABLE events (
  id             text PRIMARY KEY,
  seq            bigint GENERATED ALWAYS AS IDENTITY,
  account_id     text NOT NULL REFERENCES accounts (id),
  mode           text NOT NULL CHECK (mode IN ('test', 'live')),
  type           text NOT NULL,
  data           json NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
  dispatched_at  timestamptz
);
CREATE INDEX events_of_tenant ON events (account_id, mode, seq DESC);
CREATE INDEX events_to_dispatch ON events (seq) WHERE dispatched_at IS NULL;
CREATE INDEX events_by_age ON events (created_at);

CREATE TABLE webhook_endpoints (
  id                 text PRIMARY KEY,
  seq                bigint GENERATED ALWAYS AS IDENTITY,
  account_id         text NOT NULL REFERENCES accounts (id),
  mode               text NOT NULL CHECK (mode IN ('test', 'live')),
  url                text NOT NULL,
  events             text[] NOT NULL,
  description        text,
  status             text NOT NULL CHECK (status IN ('enabled', 'disabled')),
  -- The signing secret, encrypted (AES-256-GCM) with the installation's webhook key.
  secret_sealed      bytea NOT NULL,
  created_at         timestamptz NOT NULL DEFAULT now(),
  -- Since when every delivery to it has failed (null once one succeeds): 3 days of it disables it.
  failing_since      timestamptz,
  deleted_at         timestamptz
);
CREATE INDEX webhook_endpoints_of_tenant ON webhook_endpoints (account_id, mode, seq DESC) WHERE deleted_at IS NULL;

CREATE TABLE webhook_deliveries (
  id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event_id       text NOT NULL REFERENCES events (id) ON DELETE CASCADE,
  endpoint_id    text NOT NULL REFERENCES webhook_endpoints (id),
  status         text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed', 'skipped')),
  attempts       integer NOT NULL DEFAULT 0,
  created_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
  next_attempt_at timestamptz,
  finished_at    timestamptz
);
CREATE INDEX webhook_deliveries_of_event ON webhook_deliveries (event_id);
CREATE INDEX webhook_deliveries_of_endpoint ON webhook_deliveries (endpoint_id, id DESC);

CREATE TABLE webhook_attempts (
  delivery_id    bigint NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  attempt        integer NOT NULL,
  attempted_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
  response_status integer,
  duration_ms    integer NOT NULL,
  error          text,
  PRIMARY KEY (delivery_id, attempt)
);

-- The key that seals webhook secrets when WEBHOOK_SECRETS_KEY is not set (development).
INSERT INTO service_secrets (name, value)
VALUES ('webhook_secrets', sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8')));
