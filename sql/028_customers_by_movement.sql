-- The customers of a month with one movement (`GET …/customers?month=&movement=`) are those whose
-- changes hold that month's code (month × 8 + movement): a look into this index, where each page
-- scanned every customer of the version for the few who churned that month (10M rows: 0.15-1.3 s
-- a page; with it, under 3 ms). A build writes it with its customers.
CREATE INDEX version_customers_moves ON version_customers USING gin (moves);
