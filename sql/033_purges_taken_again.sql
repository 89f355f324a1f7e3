-- sql/030 took every version purged before it as finished (purge_finished_at = rows_purged_at),
-- those whose purge was cut short after their rows were marked purged too: their customers (in
-- the shared table, or a table of their own) and their changes stayed for good. Those that still
-- hold any are taken again: the next purge run deletes them and marks the purge finished. A purge
-- finished since sets purge_finished_at after rows_purged_at, and is left alone.
UPDATE versions v SET purge_finished_at = NULL
WHERE v.rows_purged_at IS NOT NULL AND v.purge_finished_at = v.rows_purged_at
  AND (v.customers_apart
       -- (a purge before 18df92a marked the table gone before it dropped it)
       OR to_regclass(format('version_customers_apart.%I', v.id)) IS NOT NULL
       OR EXISTS (SELECT 1 FROM version_customers c WHERE c.version_id = v.id)
       OR EXISTS (SELECT 1 FROM version_changes x WHERE x.version_id = v.id OR x.since_version_id = v.id));
