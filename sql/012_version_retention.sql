-- Rows of a superseded version are kept VERSION_RETENTION_DAYS after it was superseded, then
-- purged with its exports; the version record stays, with rows_purged_at set.
ALTER TABLE versions ADD COLUMN superseded_at timestamptz;
ALTER TABLE versions ADD COLUMN rows_purged_at timestamptz;
UPDATE versions SET superseded_at = coalesce(completed_at, now()) WHERE status = 'superseded';
CREATE INDEX versions_to_purge ON versions (superseded_at) WHERE status = 'superseded' AND rows_purged_at IS NULL;
CREATE INDEX exports_of_version ON exports (version_id);
