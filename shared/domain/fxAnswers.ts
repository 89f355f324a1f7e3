// A version's figures converted ahead to a reporting currency (sql/027): for accounts that convert,
// the job that makes a version's basis ahead (figuresBackfill.ts) also converts its figures to each
// currency of the set of rates in force, on the basis thread, and keeps them as the reads answer
// them (reporting.ts Reporting and ReportingCohorts, as JSON). A set never changes: an answer kept
// for one is right for as long as the version lives. The only writer of version_fx_answers.
import type { Reporting, ReportingCohorts } from '../figures/reporting.ts';
import type { Pool, Queryable } from '../platform/db.ts';
import type { Tenant } from './datasets.ts';
import { ratesInForce } from './exchangeRates.ts';
import { convertApart, convertCohortsApart } from './fxBasisMaker.ts';

/**
 * Converts the version's figures to every currency of the tenant's set in force and keeps them,
 * then lets go of the version's answers for other sets. The set's id, or undefined when the
 * tenant has none.
 */
export async function convertAhead(pool: Pool, tenant: Tenant, versionId: string): Promise<string | undefined> {
  const set = await ratesInForce(pool, tenant);
  if (!set) return undefined;
  for (const currency of set.currencies) {
    const metrics = await convertApart(pool, versionId, set.table, currency);
    const cohorts = await convertCohortsApart(pool, versionId, set.table, currency);
    await pool.query(
      `INSERT INTO version_fx_answers (version_id, exchange_rates_id, currency, metrics, cohorts) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (version_id, exchange_rates_id, currency) DO UPDATE SET metrics = excluded.metrics, cohorts = excluded.cohorts`,
      [versionId, set.id, currency, JSON.stringify(metrics), JSON.stringify(cohorts)],
    );
  }
  await pool.query('DELETE FROM version_fx_answers WHERE version_id = $1 AND exchange_rates_id <> $2', [versionId, set.id]);
  return set.id;
}

/** Lets go of the answers of versions no longer active (superseded, or their dataset deleted): their reads convert at read. */
export async function dropInactiveAnswers(db: Queryable): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM version_fx_answers a WHERE NOT EXISTS (SELECT 1 FROM datasets d WHERE d.active_version_id = a.version_id AND d.deleted_at IS NULL)`,
  );
  return rowCount ?? 0;
}

/** What is kept per version, set and currency. */
type Kept = { metrics: Reporting; cohorts: ReportingCohorts };

/** The version's metrics or cohorts converted ahead for the set and currency, if they were. */
export async function keptAnswer<K extends keyof Kept>(db: Queryable, kind: K, versionId: string, setId: string, currency: string): Promise<Kept[K] | undefined> {
  const column = kind === 'metrics' ? 'metrics' : 'cohorts';
  const { rows } = await db.query<{ answer: string }>(`SELECT ${column} AS answer FROM version_fx_answers WHERE version_id = $1 AND exchange_rates_id = $2 AND currency = $3`, [
    versionId,
    setId,
    currency,
  ]);
  return rows[0] ? (JSON.parse(rows[0].answer) as Kept[K]) : undefined;
}
