-- A version's exact cells for conversion (version_fx.cells) are written by every build and read
-- once, when its basis is made: kept as the text the build wrote, not parsed into jsonb (at 1M
-- rows that parse was a fifth of storing the figures). Its readers cast it to text already.
ALTER TABLE version_fx ALTER COLUMN cells TYPE text USING cells::text;
