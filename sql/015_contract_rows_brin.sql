-- contract_rows is found by version through a BRIN bloom index rather than a btree. A build
-- writes its rows together (COPY appends them page after page), so a version lives in a few runs
-- of pages; a bloom summary per 16 pages (about 1,000 rows) finds them as well as the btree did
-- for a version's reads (exports, SQL metrics), and a build no longer inserts every row into a
-- btree: that was about 40% of PostgreSQL's work in a build's COPY (1M rows: 1.35 s of CPU with
-- the btree, 0.97 s with this, 0.80 s with no index). Bloom, not minmax: version ids are random,
-- so a range holding two versions would span half the key space as a min-max. autosummarize asks
-- autovacuum to summarize each range once it is full; ranges not summarized yet are always read.
-- A purge (deleteRowsOfVersion) deletes by page range and has the ranges it emptied summarized
-- again, so the summaries do not fill up with purged versions over the years.
DROP INDEX contract_rows_version;
CREATE INDEX contract_rows_version ON contract_rows USING brin (version_id text_bloom_ops) WITH (pages_per_range = 16, autosummarize = on);
