-- A large version's customers (shared/domain/monthlyFigures.ts, customersTableOf) get a table of
-- their own in this schema, named by the version's id: a build fills it with no index, then
-- builds its indexes at once (the same as version_customers'), where each row written to the shared
-- table also went into its four indexes one entry at a time (a GIN entry per change). Realistic
-- 10M rows (1.06M customers' rows, 16.7M moves): built at once, the four take 3.2 s.
-- Its purge drops the table. The table is made LIKE version_customers when the build runs: a
-- later change of version_customers' columns must change the tables already made too. Small versions stay in version_customers: a table and four indexes
-- for each would cost a small build more than it saves. (IF NOT EXISTS: a database emptied by
-- dropping its public schema alone, as a test does, keeps this one.)
CREATE SCHEMA IF NOT EXISTS version_customers_apart;
ALTER TABLE versions ADD COLUMN customers_apart boolean NOT NULL DEFAULT false;
