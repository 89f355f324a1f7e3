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
import { fxBasisApart } from './fxBasisMaker.ts';
import { convertAhead } from './fxAnswers.ts';
import type { Mode } from '../tenancy/apiKeys.ts';
import { BASIS_FORMAT } from '../figures/fxBasis.ts';

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

/**
 * Makes ahead, for accounts that have uploaded exchange rates, what a first reporting read of the
 * next active version of several currencies needs and it lacks: its basis (fxBasis.ts; none, or
 * one of an older layout: see basisIsCurrent), and its figures converted to each currency of the
 * set in force (fxAnswers.ts). Its id, or undefined when none is left.
 */
export async function makeNextFxBasis(pool: Pool, skip: readonly string[] = []): Promise<string | undefined> {
  const { rows } = await pool.query<{ version_id: string; account_id: string; mode: Mode }>(
    `SELECT f.version_id, d.account_id, d.mode FROM version_fx f JOIN datasets d ON d.active_version_id = f.version_id
     CROSS JOIN LATERAL (SELECT id FROM exchange_rates r WHERE r.account_id = d.account_id AND r.mode = d.mode ORDER BY seq DESC LIMIT 1) newest
     WHERE d.deleted_at IS NULL AND f.version_id <> ALL ($1::text[])
       AND (f.basis IS NULL OR get_byte(f.basis, 0) <> ${BASIS_FORMAT}
            OR NOT EXISTS (SELECT 1 FROM version_fx_answers a WHERE a.version_id = f.version_id AND a.exchange_rates_id = newest.id))
       AND (SELECT count(*) FROM version_series s WHERE s.version_id = f.version_id) > 1
     LIMIT 1`,
    [skip],
  );
  const next = rows[0];
  if (next === undefined) return undefined;
  await fxBasisApart(pool, next.version_id);
  await convertAhead(pool, { accountId: next.account_id, mode: next.mode }, next.version_id);
  return next.version_id;
}

/** Whether an account converts to a reporting currency (has uploaded rates in the mode): then its builds make their basis ahead. */
export async function convertsFigures(pool: Pool, accountId: string, mode: string): Promise<boolean> {
  const { rows } = await pool.query('SELECT 1 FROM exchange_rates WHERE account_id = $1 AND mode = $2 LIMIT 1', [accountId, mode]);
  return rows.length > 0;
}
