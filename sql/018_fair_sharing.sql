-- Sharing the service fairly (contract, "Sharing the service fairly").

-- Start-time fair queuing of the build and export jobs (shared/domain/fairQueues.ts). Each lane
-- (a queue, or a band of one) has a virtual clock: the virtual start of the last job its workers
-- took. Each account has, per lane, the virtual finish of its last job sent. A job sent starts at
-- greatest(the account's finish, the clock), is sent with minus that start as its pg-boss
-- priority, and moves the account's finish one on: accounts take turns, and an account's own jobs
-- keep their order. Nothing here is read by a fetch.
CREATE TABLE fair_queue_clocks (
  lane         text PRIMARY KEY,
  virtual_now  bigint NOT NULL
);
CREATE TABLE fair_queue_accounts (
  lane            text NOT NULL,
  account_id      text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  virtual_finish  bigint NOT NULL,
  PRIMARY KEY (lane, account_id)
);

-- The rejected rows of a version that failed validation, as the CSV file the errors resource
-- serves (written once by the build, read in pages by every GET). Kept as long as the file it
-- was made from would have been (REJECTED_FILE_DAYS).
ALTER TABLE versions ADD COLUMN rejected_blob_id text;

-- Locks on resumable uploads (api/reception/uploadLocks.ts): a lease per upload, renewed while
-- its request works, so that a request holds no connection while its client sends slowly.
CREATE TABLE upload_locks (
  upload_id   text PRIMARY KEY,
  holder      text NOT NULL,
  expires_at  timestamptz NOT NULL
);
