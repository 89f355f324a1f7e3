-- The BRIN ranges of contract_rows (sql/015) a purge deletes rows in, kept until a vacuum could
-- take those rows and the ranges were summarized again after it (worker/jobs/purgeVersions.ts). A
-- summary made while another session's snapshot could still see deleted rows keeps them, and would
-- match every version between theirs and the rows that later come to those pages. Kept before the
-- rows go, so that a purge cut short loses none; `kept_at`, so that a range is forgotten only once
-- no transaction that began before it was kept is left to hold the vacuum back.
CREATE TABLE contract_rows_ranges_to_summarize (
  range    bigint PRIMARY KEY,
  kept_at  timestamptz NOT NULL
);
