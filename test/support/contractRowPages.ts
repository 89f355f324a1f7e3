// What a read of a version's contract rows costs through the BRIN index (sql/015), for the tests
// of purges that empty its ranges and summarize them again.
import type { Pool } from '../../shared/platform/db.ts';

/** Heap pages a read of the version through the index visits. */
export async function pagesRead(db: Pool, versionId: string): Promise<number> {
  const client = await db.connect();
  try {
    await client.query('SET enable_seqscan = off');
    const { rows } = await client.query(`EXPLAIN (ANALYZE, FORMAT JSON) SELECT count(*) FROM contract_rows WHERE version_id = '${versionId}'`);
    let pages = 0;
    const visit = (node: Record<string, unknown>) => {
      pages += Number(node['Exact Heap Blocks'] ?? 0) + Number(node['Lossy Heap Blocks'] ?? 0);
      for (const child of (node['Plans'] as Record<string, unknown>[] | undefined) ?? []) visit(child);
    };
    visit(rows[0]['QUERY PLAN'][0].Plan);
    return pages;
  } finally {
    await client.query('RESET enable_seqscan');
    client.release();
  }
}

/** Waits (up to 10 s) until no other session of the database holds a snapshot. */
export async function noOtherSnapshots(db: Pool): Promise<void> {
  for (let wait = 0; wait < 200; wait++) {
    const { rows } = await db.query(
      'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_xmin IS NOT NULL',
    );
    if (rows[0].n === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('another session kept a snapshot for 10 s');
}
