-- Month-end figures (../shared/spec/contract.md, "Metrics and catalog", rewritten): the monthly
-- series becomes month-end snapshots with movements and retention, and a version gains its
-- cohorts and each customer's changes of MRR. The old series counted a contract in every month its
-- term touched; it is dropped, not converted (its figures were wrong). Versions active before this
-- migration have no monthly figures until they are built again: see docs/operating.md.
DROP TABLE version_monthly;

-- One row per month and currency of a version's series: the figures as the metrics read shows
-- them (rounded when computed: exact arithmetic happens in the build).
CREATE TABLE version_months (
  version_id  text NOT NULL REFERENCES versions (id) ON DELETE CASCADE,
  month       date NOT NULL,
  currency    char(3) NOT NULL,
  figures     jsonb NOT NULL,
  PRIMARY KEY (version_id, month, currency)
);

-- Each currency's series: its first and last month (month numbers, year × 12 + month − 1).
CREATE TABLE version_series (
  version_id   text NOT NULL REFERENCES versions (id) ON DELETE CASCADE,
  currency     char(3) NOT NULL,
  first_month  int NOT NULL,
  last_month   int NOT NULL,
  PRIMARY KEY (version_id, currency)
);

-- A currency's cohorts, as the cohorts read shows them: the JSON of its entries, in cohort
-- order, joined by commas (an array's inside), so that a read sends them as they are: a
-- version's cohorts are megabytes of JSON (a cohort per month, each with every month after it).
CREATE TABLE version_cohorts (
  version_id  text NOT NULL REFERENCES versions (id) ON DELETE CASCADE,
  currency    char(3) NOT NULL,
  cohorts     text NOT NULL,
  PRIMARY KEY (version_id, currency)
);

-- Each customer's changes of MRR in a currency (shared/figures/customerChanges.ts): from its
-- first change (new business) to its last (its final churn), month numbers. No foreign key: a
-- build writes hundreds of thousands of these with COPY, and the version's purge deletes them.
CREATE TABLE version_customers (
  version_id   text NOT NULL,
  currency     char(3) NOT NULL,
  customer     text COLLATE "C" NOT NULL,
  first_month  int NOT NULL,
  last_month   int NOT NULL,
  changes      bytea NOT NULL,
  -- Each change's month × 8 + its movement (the index of MOVEMENTS): which customers churned in
  -- March is a look at this in SQL, not a decoding of every customer's changes.
  moves        int[] NOT NULL,
  PRIMARY KEY (version_id, currency, customer)
);

-- What a version recognised in its header, and its warnings (not errors).
ALTER TABLE versions ADD COLUMN columns jsonb, ADD COLUMN warnings jsonb;
