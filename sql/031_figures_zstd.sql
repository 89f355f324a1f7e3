-- A version's cohorts (the JSON of each currency's) and the cells for its basis, compressed by the
-- build with zstd (shared/figures/customerChanges.ts, zstdBytes) and stored as they come: PostgreSQL
-- compressed them with pglz inside the build's transaction, on its critical path (a realistic
-- 1M-row version's 3.8 MB of cohorts: 60-70 ms; its 4.9 MB of cells: 140 ms), into more bytes
-- than zstd's. The lz4 of TOAST is not in every build of PostgreSQL (the embedded one has none).
-- Versions built before keep their text, read as before: a row has one or the other.
ALTER TABLE version_cohorts ALTER COLUMN cohorts DROP NOT NULL, ADD COLUMN cohorts_zstd bytea,
  ADD CONSTRAINT version_cohorts_text_or_zstd CHECK ((cohorts IS NULL) <> (cohorts_zstd IS NULL));
ALTER TABLE version_cohorts ALTER COLUMN cohorts_zstd SET STORAGE EXTERNAL;
ALTER TABLE version_fx ADD COLUMN cells_zstd bytea;
ALTER TABLE version_fx ALTER COLUMN cells_zstd SET STORAGE EXTERNAL;
