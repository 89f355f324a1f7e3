-- A version's basis for conversion is kept packed (shared/figures/packing.ts, fxBasis.ts packBasis):
-- as JSON with decimal strings it was 33.8 MB at 10M rows, and fetching and parsing it were most of
-- a first reporting read. The JSON one an earlier release made stays in basis_json until it is
-- first read, then is packed into basis: its version's customers may have been purged since
-- (shared/domain/versionRetention.ts), so it could not be made again.
ALTER TABLE version_fx RENAME COLUMN basis TO basis_json;
ALTER TABLE version_fx ADD COLUMN basis bytea;
-- Stored as it is, never compressed (packed, it does not compress), so that it is read in slices.
ALTER TABLE version_fx ALTER COLUMN basis SET STORAGE EXTERNAL;
