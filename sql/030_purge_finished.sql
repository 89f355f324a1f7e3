-- A superseded version's purge (shared/domain/versionRetention.ts) marks rows_purged_at once its
-- rows are gone (from then on its customers and changes answer 404), then deletes its customers
-- and its changes. A purge cut short between the two left them for good: the version, marked,
-- was never taken again. purge_finished_at is set when all of it is gone; a version marked and
-- not finished is taken again by the next run. Versions purged before this are taken as finished.
ALTER TABLE versions ADD COLUMN purge_finished_at timestamptz;
UPDATE versions SET purge_finished_at = rows_purged_at WHERE rows_purged_at IS NOT NULL;
