-- Resumable (tus) uploads. An upload may carry one tus upload (resumable_at), whose bytes go to
-- the upload's blob as they arrive. Where each store keeps the state of an unfinished one:
-- PostgreSQL: its declared length and the bytes received so far (written in the same statement as
-- each chunk, so the offset a client is told is always what is stored); S3: the parts of its
-- multipart upload (S3's own ListParts is not needed, and not every S3-compatible server has it).
ALTER TABLE uploads ADD COLUMN resumable_at timestamptz;

CREATE TABLE resumable_blobs (
  blob_id     text PRIMARY KEY REFERENCES blobs (id) ON DELETE CASCADE,
  length      bigint NOT NULL,
  received    bigint NOT NULL DEFAULT 0,
  next_seq    integer NOT NULL DEFAULT 0,
  metadata    jsonb,
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE resumable_parts (
  blob_id      text NOT NULL REFERENCES blobs (id) ON DELETE CASCADE,
  part_number  integer NOT NULL,
  etag         text NOT NULL,
  bytes        bigint NOT NULL,
  PRIMARY KEY (blob_id, part_number)
);
