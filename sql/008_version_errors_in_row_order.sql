-- A version's row errors are read in row order a page at a time (GET …/versions/{id}/errors) and
-- the first ones with every version object: an index in that order, so that no page sorts them all.
CREATE INDEX version_errors_in_row_order ON version_errors (version_id, row_number, seq);
