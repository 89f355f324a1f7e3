-- A version's figures converted ahead to each currency of its account's set of rates in force
-- (shared/domain/fxAnswers.ts), so that a first reporting read of a large version reads them
-- rather than its basis (at 10M rows, the basis read and converted took 0.5-0.8 s). A set never
-- changes, so an answer never goes stale: a new set gets its own, and the job that makes them
-- drops those of sets no longer in force and of versions no longer active.
CREATE TABLE version_fx_answers (
  version_id         text NOT NULL REFERENCES versions (id) ON DELETE CASCADE,
  exchange_rates_id  text NOT NULL REFERENCES exchange_rates (id) ON DELETE CASCADE,
  currency           char(3) NOT NULL,
  metrics            text NOT NULL,
  cohorts            text NOT NULL,
  PRIMARY KEY (version_id, exchange_rates_id, currency)
);
CREATE INDEX version_fx_answers_set ON version_fx_answers (exchange_rates_id);
