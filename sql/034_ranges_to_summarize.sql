-- The BRIN ranges of contract_rows (sql/015) that a deleted dataset's purge emptied: a summary made
-- while another session's snapshot could still see the deleted rows keeps them, and would match
-- every version between theirs and the rows that later come to those pages. Version purges
-- summarize theirs again after their vacuum (worker/jobs/purgeVersions.ts); a dataset's purge,
-- which does not vacuum, leaves its ranges here for that hourly job to take with its own.
CREATE TABLE contract_rows_ranges_to_summarize (
  range bigint PRIMARY KEY
);
