// Migration 032: each currency's months move from version_months (a row per month) into its
// version_series row (one JSON array), and a version built before it reads the same.
import { expect } from 'chai';
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readMonthly } from '../shared/domain/monthlyFigures.ts';
import { createDataset } from '../shared/domain/datasets.ts';
import { createPool } from '../shared/platform/db.ts';
import { migrate } from '../shared/platform/migrate.ts';
import { sqlDir } from '../shared/platform/paths.ts';
import { createAccount } from '../shared/tenancy/accounts.ts';
import { useService } from './support/service.ts';

/** A month's figures as builds before 032 stored them (jsonb), with a value of its own. */
const figures = (mrr: number) => ({
  activeContracts: 1,
  activeCustomers: mrr === 0 ? 0 : 1,
  mrr: `${mrr}.00`,
  arr: `${mrr * 12}.00`,
  arpa: mrr === 0 ? null : `${mrr}.00`,
  movements: { newBusiness: { customers: 0, mrr: '0.00' }, netNewMrr: '0.00' },
  rates: { customerChurn: null },
});

describe('migration 032: months in their series', () => {
  const svc = useService({ worker: false });

  it('when a version was built before 032, then its months become its series\' arrays, in month order, and its metrics read the same, sliced or not', async () => {
    const name = `ds_mig032_${process.pid}_${Date.now()}`;
    await svc.db.query(`CREATE DATABASE ${name}`);
    const url = new URL(svc.databaseUrl);
    url.pathname = `/${name}`;
    const pool = createPool(url.toString(), 2, 'test-migration');
    const before = await mkdtemp(join(tmpdir(), 'sql-031-'));
    try {
      for (const file of await readdir(sqlDir)) if (/^\d{3}_/.test(file) && Number(file.slice(0, 3)) < 32) await cp(join(sqlDir, file), join(before, file));
      await migrate(pool, before);
      const account = await createAccount(pool, 'Before 032');
      const ds = await createDataset(pool, { accountId: account.id, mode: 'live' }, { externalRef: 'before-032' });
      const versionId = 'ver_before032aaaaaaaaaaaa';
      await pool.query(`INSERT INTO versions (id, dataset_id, status, request_path) VALUES ($1, $2, 'active', '/v1')`, [versionId, ds.id]);
      // USD from 2024-11 to 2025-02, EUR from 2025-01 to 2025-03 (month numbers: year × 12 + month − 1); inserted out of order.
      const series = [
        { currency: 'USD', first: 2024 * 12 + 10, mrr: [5, 7, 0, 9] },
        { currency: 'EUR', first: 2025 * 12, mrr: [100, 120, 0] },
      ];
      for (const s of series) {
        await pool.query('INSERT INTO version_series (version_id, currency, first_month, last_month) VALUES ($1, $2, $3, $4)', [versionId, s.currency, s.first, s.first + s.mrr.length - 1]);
        for (const i of [...s.mrr.keys()].reverse()) {
          const month = s.first + i;
          await pool.query('INSERT INTO version_months (version_id, month, currency, figures) VALUES ($1, make_date($2 / 12, $2 % 12 + 1, 1), $3, $4)', [versionId, month, s.currency, figures(s.mrr[i]!)]);
        }
      }
      // What the read before 032 served.
      const read031 = async (from: string | null, to: string | null) =>
        (
          await pool.query(
            `SELECT jsonb_build_object('month', to_char(month, 'YYYY-MM'), 'currency', currency) || figures AS doc
             FROM version_months WHERE version_id = $1 AND ($2::date IS NULL OR month >= $2) AND ($3::date IS NULL OR month <= $3)
             ORDER BY month, currency COLLATE "C"`,
            [versionId, from && `${from}-01`, to && `${to}-01`],
          )
        ).rows.map((r) => r.doc);
      const whole = await read031(null, null);
      const slice = await read031('2024-12', '2025-01');
      expect(whole).to.have.length(7);
      expect(slice.map((d) => `${d.month} ${d.currency}`)).to.deep.equal(['2024-12 USD', '2025-01 EUR', '2025-01 USD']);

      await migrate(pool);
      const { rows } = await pool.query<{ currency: string; months: unknown[] }>('SELECT currency, months FROM version_series WHERE version_id = $1 ORDER BY currency', [versionId]);
      expect(rows.map((r) => r.currency)).to.deep.equal(['EUR', 'USD']);
      expect(rows[1]!.months).to.deep.equal([5, 7, 0, 9].map(figures));
      expect(await readMonthly(pool, versionId, {})).to.deep.equal(whole);
      expect(await readMonthly(pool, versionId, { from: '2024-12', to: '2025-01' })).to.deep.equal(slice);
      expect((await pool.query(`SELECT to_regclass('version_months') AS t`)).rows[0].t).to.equal(null);
    } finally {
      await pool.end();
      await rm(before, { recursive: true, force: true });
      await svc.db.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    }
  });
});
