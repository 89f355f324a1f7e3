-- Export formats are defined once, in shared/domain/exportFormats.ts, and the API accepts only
-- those: the column no longer lists them, so a new format needs no migration.
ALTER TABLE exports DROP CONSTRAINT IF EXISTS exports_format_check;
