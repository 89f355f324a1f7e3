-- The customers read (`GET …/customers?month=`) lists the customers whose first change is at or
-- before the month and whose last is at or after it, in customer order. In the middle of a series
-- most customers qualify and the primary key's order finds a page at once; near either end few do,
-- and that scan read most of the version's customers to fill one page (1M rows: 200-400 ms for the
-- last month). With these, PostgreSQL takes the few from an index and sorts them (1M rows: 2-16 ms
-- for any month, 500 rows). A build writes them with its customers (about 4% more on the COPY).
CREATE INDEX version_customers_first ON version_customers (version_id, first_month);
CREATE INDEX version_customers_last ON version_customers (version_id, last_month);
