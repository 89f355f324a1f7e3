-- One reporting currency (../shared/spec/contract.md, "One reporting currency"): the account's own
-- month-end exchange rates, uploaded as sets (the newest of an account and mode is in force), and
-- what a version keeps so that its figures convert at read in a few hundred rows.

-- A set of rates: how many units of `base` one unit of a currency is worth at a month's end.
-- `rates` holds every record as [month, currency, rate] (month numbers, year × 12 + month − 1;
-- rates as the decimal strings given), ordered by month then currency.
CREATE TABLE exchange_rates (
  id          text PRIMARY KEY,
  seq         bigint GENERATED ALWAYS AS IDENTITY,
  account_id  text NOT NULL REFERENCES accounts (id),
  mode        text NOT NULL CHECK (mode IN ('test', 'live')),
  base        char(3) NOT NULL,
  currencies  text[] NOT NULL,
  from_month  int NOT NULL,
  to_month    int NOT NULL,
  rates       jsonb NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX exchange_rates_newest ON exchange_rates (account_id, mode, seq DESC);

-- A version's figures for conversion (shared/figures/fxBasis.ts). `cells`: its book's exact
-- cells, kept by the build (cheap). `basis`: per currency and month, exact sums of what no rate
-- can reclassify, and the few changes of customers of several currencies that the rates decide;
-- made at the version's first reporting read (from `cells` and the customers of several
-- currencies, or from every customer for a version built before this table) and kept.
CREATE TABLE version_fx (
  version_id  text PRIMARY KEY REFERENCES versions (id) ON DELETE CASCADE,
  cells       jsonb,
  basis       jsonb
);
