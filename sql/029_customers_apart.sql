-- A large version's customers (shared/domain/monthlyFigures.ts, customersTableOf) get a table of
-- their own in this schema, named by the version's id: a build fills it with no index, then
-- builds its indexes at once (the same as version_customers'), where each row written to the shared
-- table also went into its four indexes one entry at a time (a GIN entry per change). Realistic
-- 10M rows: the build waited some 20 s on that upkeep; built at once, the indexes take a few.
-- Its purge drops the table. Small versions stay in version_customers: a table and four indexes
-- for each would cost a small build more than it saves.
CREATE SCHEMA version_customers_apart;
ALTER TABLE versions ADD COLUMN customers_apart boolean NOT NULL DEFAULT false;
