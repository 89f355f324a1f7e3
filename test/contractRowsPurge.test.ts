// deleteRowsOfVersion over the BRIN index (sql/015): it deletes exactly one version's rows in
// batches of about the size asked, whether the version's pages are one run or shared with another
// version's, and the ranges it emptied stop matching the purged version (their summaries are
// made anew), so that pages reused by later versions are not read for it; made again after the
// vacuum (vacuumAndSummarizeAgain) when a snapshot could still see the deleted rows as the purge
// made them, and again at the next run while one that could see them is open at the vacuum.
import { expect } from 'chai';
import { deleteRowsOfVersion, vacuumAndSummarizeAgain } from '../shared/domain/contractRows.ts';
import type { Pool } from '../shared/platform/db.ts';
import { noOtherSnapshots, pagesRead } from './support/contractRowPages.ts';
import { useService } from './support/service.ts';

/** `rows` rows of each version, interleaved row by row when several are given (one INSERT). */
async function insertRows(db: Pool, versionIds: string[], rows: number): Promise<void> {
  await db.query(
    `INSERT INTO contract_rows (version_id, row_number, contract_id, customer, product, start_date, end_date, amount, currency)
     SELECT v, g, 'c-' || g, 'Customer ' || (g % 97), 'Pro', '2026-01-01', '2026-12-31', 100.00, 'EUR'
     FROM generate_series(1, $2::int) g, unnest($1::text[]) v ORDER BY g, v`,
    [versionIds, rows],
  );
}

const count = async (db: Pool, versionId: string) =>
  Number((await db.query('SELECT count(*) FROM contract_rows WHERE version_id = $1', [versionId])).rows[0].count);

describe('purging a version\'s rows', () => {
  const svc = useService({ worker: false });

  it('when a version\'s rows are one run of pages or shared with another version\'s, then exactly its rows go, in batches of about the size asked', async () => {
    await insertRows(svc.db, ['ver_purgeaaaaaaaaaaaaaaa1'], 30_000); // a run of its own
    await insertRows(svc.db, ['ver_purgeaaaaaaaaaaaaaaa2', 'ver_purgeaaaaaaaaaaaaaaa3'], 20_000); // page by page with another
    const batches: number[] = [];
    const deleted = await deleteRowsOfVersion(svc.db, 'ver_purgeaaaaaaaaaaaaaaa1', { batchRows: 2_000, onBatch: (total) => batches.push(total) });
    expect(deleted).to.equal(30_000);
    expect(batches.at(-1)).to.equal(30_000);
    // About 2,000 a batch: at most that, or one run of 64 pages (about 4,500 of these rows) when it holds more.
    expect(batches.length).to.be.within(6, 40);
    for (let i = 1; i < batches.length; i++) expect(batches[i]! - batches[i - 1]!).to.be.within(1, 5_000);

    expect(await deleteRowsOfVersion(svc.db, 'ver_purgeaaaaaaaaaaaaaaa2', { batchRows: 5_000 })).to.equal(20_000);
    expect(await count(svc.db, 'ver_purgeaaaaaaaaaaaaaaa1')).to.equal(0);
    expect(await count(svc.db, 'ver_purgeaaaaaaaaaaaaaaa2')).to.equal(0);
    expect(await count(svc.db, 'ver_purgeaaaaaaaaaaaaaaa3')).to.equal(20_000);
    expect(await deleteRowsOfVersion(svc.db, 'ver_purgeaaaaaaaaaaaaaaa2')).to.equal(0); // again: nothing, no error
  });

  it('when the pages of a purged version are reused by a new one, then a read of the purged version no longer visits them', async () => {
    await svc.db.query('TRUNCATE contract_rows');
    await insertRows(svc.db, ['ver_purgebbbbbbbbbbbbbbb1'], 30_000);
    await insertRows(svc.db, ['ver_purgebbbbbbbbbbbbbbb9'], 1_000); // after it: its pages are not the table's end (a vacuum would cut those off)
    await svc.db.query(`SELECT brin_summarize_new_values('contract_rows_version'::regclass)`);
    expect(await pagesRead(svc.db, 'ver_purgebbbbbbbbbbbbbbb1')).to.be.above(100);
    // The purge's new summaries leave out its deleted rows only when no snapshot may still see them:
    // an autovacuum's analyze of the rows just inserted holds one (CI, once: 64 pages read below).
    await svc.db.query('ALTER TABLE contract_rows SET (autovacuum_enabled = off)');
    await noOtherSnapshots(svc.db);
    await deleteRowsOfVersion(svc.db, 'ver_purgebbbbbbbbbbbbbbb1');
    await svc.db.query('VACUUM contract_rows');
    const pages = async () => Number((await svc.db.query(`SELECT pg_relation_size('contract_rows') / 8192 AS pages`)).rows[0].pages);
    const freed = await pages();
    await insertRows(svc.db, ['ver_purgebbbbbbbbbbbbbbb2'], 30_000);
    expect(await pages()).to.equal(freed); // the new rows went into the pages the vacuum freed
    await svc.db.query(`SELECT brin_summarize_new_values('contract_rows_version'::regclass)`);
    expect(await count(svc.db, 'ver_purgebbbbbbbbbbbbbbb2')).to.equal(30_000);
    expect(await pagesRead(svc.db, 'ver_purgebbbbbbbbbbbbbbb2')).to.be.above(100);
    // Without new summaries, every range the new rows went to would still match the purged version.
    expect(await pagesRead(svc.db, 'ver_purgebbbbbbbbbbbbbbb1')).to.be.below(20);
    await svc.db.query('ALTER TABLE contract_rows RESET (autovacuum_enabled)');
  });

  it('when another session\'s snapshot could still see the purged rows, then the ranges the purge touched are summarized again after the vacuum, and a read of the purged version no longer visits them', async () => {
    await withRowsToPurge('ver_purgecccccccccccccccc', async () => {
      // A snapshot (a build's transaction, an analyze) open across the purge: its summaries take the deleted rows in.
      await whileASnapshotIsHeld(() => deleteRowsOfVersion(svc.db, 'ver_purgecccccccccccccccc1'));
      expect(await rangesKept()).to.be.above(10);
      await noOtherSnapshots(svc.db); // else the vacuum may leave the deleted rows too
      await svc.db.query('VACUUM contract_rows');
      await insertRows(svc.db, ['ver_purgecccccccccccccccc2'], 30_000); // into the pages the vacuum freed
      await svc.db.query(`SELECT brin_summarize_new_values('contract_rows_version'::regclass)`);
      expect(await pagesRead(svc.db, 'ver_purgecccccccccccccccc1')).to.be.above(100); // as the purge summarized them
      const kept = await rangesKept();
      expect(await vacuumAndSummarizeAgain(svc.db)).to.deep.equal({ summarized: kept, left: 0 });
      expect(await pagesRead(svc.db, 'ver_purgecccccccccccccccc1')).to.be.below(20);
      expect(await count(svc.db, 'ver_purgecccccccccccccccc2')).to.equal(30_000);
      expect(await pagesRead(svc.db, 'ver_purgecccccccccccccccc2')).to.be.above(100);
      expect(await rangesKept()).to.equal(0);
    });
  });

  it('when a transaction that could see the purged rows is still open as the vacuum runs, then their ranges are kept for the next run, which summarizes them without the rows', async () => {
    await withRowsToPurge('ver_purgedddddddddddddddd', async () => {
      const kept = await whileASnapshotIsHeld(async () => {
        await deleteRowsOfVersion(svc.db, 'ver_purgedddddddddddddddd1');
        const ranges = await rangesKept();
        // The vacuum cannot take rows the snapshot sees: summarized again, the ranges still hold them, so they stay kept.
        expect(await vacuumAndSummarizeAgain(svc.db)).to.deep.equal({ summarized: ranges, left: ranges });
        return ranges;
      });
      expect(kept).to.be.above(10);
      await noOtherSnapshots(svc.db);
      expect(await vacuumAndSummarizeAgain(svc.db)).to.deep.equal({ summarized: kept, left: 0 });
      await insertRows(svc.db, ['ver_purgedddddddddddddddd2'], 30_000); // into the pages the vacuum freed
      expect(await pagesRead(svc.db, 'ver_purgedddddddddddddddd2')).to.be.above(100);
      expect(await pagesRead(svc.db, 'ver_purgedddddddddddddddd1')).to.be.below(20);
      // Nothing kept: nothing vacuumed.
      expect(await vacuumAndSummarizeAgain(svc.db)).to.deep.equal({ summarized: 0, left: 0 });
    });
  });

  /**
   * Runs `work` over 30,000 rows of version `prefix`1 with 1,000 of `prefix`9 after them (its pages
   * are not the table's end, which a vacuum would cut off), summarized, nothing else in the table
   * and nothing kept, with autovacuum off meanwhile (its analyze holds a snapshot too).
   */
  async function withRowsToPurge(prefix: string, work: () => Promise<void>): Promise<void> {
    await svc.db.query('TRUNCATE contract_rows, contract_rows_ranges_to_summarize');
    await svc.db.query('ALTER TABLE contract_rows SET (autovacuum_enabled = off)');
    try {
      await insertRows(svc.db, [`${prefix}1`], 30_000);
      await insertRows(svc.db, [`${prefix}9`], 1_000);
      await svc.db.query(`SELECT brin_summarize_new_values('contract_rows_version'::regclass)`);
      await work();
    } finally {
      await svc.db.query('ALTER TABLE contract_rows RESET (autovacuum_enabled)');
    }
  }

  /** Runs `work` while another session holds a snapshot taken before it (a REPEATABLE READ transaction). */
  async function whileASnapshotIsHeld<T>(work: () => Promise<T>): Promise<T> {
    const holder = await svc.db.connect();
    try {
      await holder.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      await holder.query('SELECT 1 FROM accounts LIMIT 1');
      return await work();
    } finally {
      await holder.query('COMMIT');
      holder.release();
    }
  }

  const rangesKept = async () => Number((await svc.db.query('SELECT count(*) AS n FROM contract_rows_ranges_to_summarize')).rows[0].n);
});
