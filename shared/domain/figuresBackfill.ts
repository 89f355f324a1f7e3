// The monthly figures of versions that became active before they existed (sql/023): each is
// computed from the version's stored rows as a build whose tally gave up computes them
// (computeMonthlyFigures), and stored in the same transaction that clears its mark, so that a
// version has all of its figures or none (a marked version has none: 016 dropped them, and it was
// built before). One version per transaction; concurrent workers take
// different versions (SKIP LOCKED). A version whose rows were purged meanwhile, or whose dataset
// was deleted, has nothing to compute from: its mark goes.
import type { Pool } from '../platform/db.ts';
import { withTransaction } from '../platform/db.ts';
import { computeMonthlyFigures, storeMonthlyFigures } from './monthlyFigures.ts';

/** Computes the figures of the oldest version still marked; its id, or undefined when none is left. */
export async function backfillNextVersion(pool: Pool): Promise<{ versionId: string; computed: boolean } | undefined> {
  return withTransaction(pool, async (client) => {
    const { rows } = await client.query<{ id: string; computable: boolean }>(
      `SELECT v.id, (v.rows_purged_at IS NULL AND d.deleted_at IS NULL) AS computable
       FROM versions v JOIN datasets d ON d.id = v.dataset_id
       WHERE v.figures_pending ORDER BY v.created_at LIMIT 1 FOR UPDATE OF v SKIP LOCKED`,
    );
    const version = rows[0];
    if (!version) return undefined;
    if (version.computable) {
      await client.query('SET LOCAL jit = off');
      await storeMonthlyFigures(client, version.id, await computeMonthlyFigures(client, version.id));
    }
    await client.query('UPDATE versions SET figures_pending = false WHERE id = $1', [version.id]);
    return { versionId: version.id, computed: version.computable };
  });
}
