-- DELETE /v1/datasets/{id}: the dataset is marked deleted at once (it answers 404 everywhere and
-- its externalRef is free again), then purged in the background with everything of it.
ALTER TABLE datasets ADD COLUMN deleted_at timestamptz;
ALTER TABLE datasets DROP CONSTRAINT datasets_external_ref_unique;
CREATE UNIQUE INDEX datasets_external_ref_unique ON datasets (account_id, mode, external_ref) WHERE deleted_at IS NULL;
