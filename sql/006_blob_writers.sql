-- Files still being written, and by a process that is alive: the writing process refreshes
-- writer_seen_at every few seconds until the file is complete (then it is cleared). A file whose
-- writer stopped refreshing was abandoned (the process died, or its database connection did):
-- a sweep fails the version waiting for it and deletes it. NULL for complete files and for the
-- files a client PUTs straight to an object store.
ALTER TABLE blobs ADD COLUMN writer_seen_at timestamptz;
CREATE INDEX blobs_being_written ON blobs (writer_seen_at) WHERE bytes IS NULL AND writer_seen_at IS NOT NULL;
