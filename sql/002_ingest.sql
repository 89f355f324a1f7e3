-- Ingest: blobs (uploaded files), upload URLs, versions, their rows, errors and computed reads.

-- Installation-wide secrets, made once here from PostgreSQL's strong random source, so every
-- web and worker process on any machine shares them without configuration.
CREATE TABLE service_secrets (
  name        text PRIMARY KEY,
  value       bytea NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
INSERT INTO service_secrets (name, value)
VALUES ('url_signing', sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8')));

-- The PostgreSQL blob store: a file as numbered chunks. EXTERNAL storage: CSV would be
-- compressed on the way in at a CPU cost and little gain.
CREATE TABLE blobs (
  id          text PRIMARY KEY,
  bytes       bigint,
  sha256      bytea,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE blob_chunks (
  blob_id  text NOT NULL REFERENCES blobs (id) ON DELETE CASCADE,
  seq      integer NOT NULL,
  data     bytea NOT NULL,
  PRIMARY KEY (blob_id, seq)
);
ALTER TABLE blob_chunks ALTER COLUMN data SET STORAGE EXTERNAL;

CREATE TABLE uploads (
  id            text PRIMARY KEY,
  dataset_id    text NOT NULL REFERENCES datasets (id),
  status        text NOT NULL CHECK (status IN ('pending', 'uploaded', 'used')),
  filename      text,
  content_type  text NOT NULL,
  max_bytes     bigint NOT NULL,
  blob_id       text,
  bytes         bigint,
  sha256        bytea,
  expires_at    timestamptz NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  uploaded_at   timestamptz,
  used_at       timestamptz
);
CREATE INDEX uploads_dataset ON uploads (dataset_id);

CREATE TABLE versions (
  id                      text PRIMARY KEY,
  dataset_id              text NOT NULL REFERENCES datasets (id),
  seq                     bigint GENERATED ALWAYS AS IDENTITY,
  status                  text NOT NULL CHECK (status IN ('queued', 'building', 'active', 'superseded', 'failed')),
  blob_id                 text,
  upload_id               text REFERENCES uploads (id),
  request_path            text NOT NULL,
  bytes_total             bigint,
  rows_processed          bigint NOT NULL DEFAULT 0,
  bytes_processed         bigint NOT NULL DEFAULT 0,
  row_count               bigint,
  contributing_row_count  bigint,
  problem                 jsonb,
  created_at              timestamptz NOT NULL DEFAULT clock_timestamp(),
  started_at              timestamptz,
  completed_at            timestamptz
);
CREATE INDEX versions_dataset_newest_first ON versions (dataset_id, seq DESC);

-- Row errors of a build, written as they are found (outside the build's transaction, which
-- rolls back), so that memory stays bounded however many there are.
CREATE TABLE version_errors (
  version_id  text NOT NULL REFERENCES versions (id) ON DELETE CASCADE,
  seq         integer NOT NULL,
  row_number  bigint NOT NULL,
  field       text NOT NULL,
  code        text NOT NULL,
  message     text NOT NULL,
  PRIMARY KEY (version_id, seq)
);

-- The stored rows of every built version. Written only by a build's transaction, with COPY.
-- Text is compared byte-wise (C collation): metrics group by equality and lists need a stable
-- order, not a locale's, and locale comparisons make the build's sorts several times slower.
CREATE TABLE contract_rows (
  version_id   text NOT NULL,
  row_number   bigint NOT NULL,
  contract_id  text COLLATE "C",
  customer     text COLLATE "C" NOT NULL,
  product      text COLLATE "C",
  start_date   date,
  end_date     date,
  amount       numeric(20, 2),
  currency     char(3)
);
CREATE INDEX contract_rows_version ON contract_rows (version_id);

-- Reads computed when a version is built, stored with it: one query serves each.
CREATE TABLE version_reads (
  version_id  text PRIMARY KEY REFERENCES versions (id) ON DELETE CASCADE,
  rows        json NOT NULL,
  currencies  json NOT NULL,
  catalog     json NOT NULL
);
CREATE TABLE version_monthly (
  version_id         text NOT NULL REFERENCES versions (id) ON DELETE CASCADE,
  currency           char(3) NOT NULL,
  month              date NOT NULL,
  active_contracts   bigint NOT NULL,
  active_customers   bigint NOT NULL,
  mrr                numeric NOT NULL,
  new_customers      bigint NOT NULL,
  churned_customers  bigint NOT NULL,
  PRIMARY KEY (version_id, currency, month)
);
