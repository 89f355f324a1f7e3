-- Exports: a version's rows as a CSV or JSONL file, built by a worker into the blob store.
CREATE TABLE exports (
  id            text PRIMARY KEY,
  dataset_id    text NOT NULL REFERENCES datasets (id),
  version_id    text NOT NULL REFERENCES versions (id),
  format        text NOT NULL CHECK (format IN ('csv', 'jsonl')),
  status        text NOT NULL CHECK (status IN ('queued', 'building', 'ready', 'failed')),
  blob_id       text,
  row_count     bigint,
  bytes         bigint,
  failure       text,
  created_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
  completed_at  timestamptz,
  expires_at    timestamptz
);
CREATE INDEX exports_dataset ON exports (dataset_id, created_at DESC);
CREATE INDEX exports_expiry ON exports (expires_at) WHERE expires_at IS NOT NULL;
