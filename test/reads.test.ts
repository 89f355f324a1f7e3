import { expect } from 'chai';
import { buildNow, HEADER, newDataset, postCsv } from './support/ingest.ts';
import { startService, useService } from './support/service.ts';
import type { Client as PoolClient, Queryable } from '../shared/platform/db.ts';
import { storedText } from '../shared/figures/customerChanges.ts';
import { computeReads } from '../shared/domain/metricsAndCatalog.ts';
import { DEFAULT_TALLY_LIMITS } from '../shared/ingest/tally.ts';
import type { BuildSummary } from '../worker/jobs/versionBuild.ts';
import { findDuplicates } from '../shared/ingest/duplicates.ts';
import { eventually } from './support/eventually.ts';
import { TALLY_THREAD_BYTES, TallyThread } from '../worker/tallyThreads.ts';
import { EXPRESS_BUILD_MAX_BYTES } from '../shared/domain/versions.ts';
import { contractsCsv } from './support/contracts.ts';
import { realisticCsv } from './support/realisticContracts.ts';
import { referenceFigures, type ReferenceRow } from './support/metricsReference.ts';
import { csvParse } from './support/csv.ts';
import { purgeVersionsPastRetention } from '../shared/domain/versionRetention.ts';
import type { Reply, TestService } from './support/service.ts';

// Rows that exercise every figure: several currencies, customers in two currencies, overlapping,
// adjacent and separate terms, a term over 600 months, excluded rows of each kind, amounts with
// leading zeros and one decimal, products that sort differently by bytes than by UTF-16 units.
const TRICKY_ROWS = [
  'e1,Ann,Pro,2024-01-15,2024-03-14,100.5,EUR',
  'e2,Ann,Pro,2024-03-15,2024-06-30,0099.99,EUR', // adjacent to e1's months: one run
  'e3,Ann,Team,2024-09-01,2024-09-30,10,EUR', // after a gap: churn, then back (not new)
  'e4,Bob,,2024-02-29,2024-02-29,0.01,EUR',
  'e5,Bob,Pro,2024-02-01,2025-01-31,1200.00,USD',
  'e6,Cy,Pro,2000-01-01,2099-12-31,1000000.00,USD', // longer than 600 months
  'e7,Dee,Zeta,,2024-05-01,10.00,EUR', // no startDate
  'e8,Dee,Zeta,2024-01-01,,10.00,EUR', // no endDate
  'e9,Dee,\uFF5Eproduct,2024-01-01,2024-02-01,0,EUR', // amount 0
  'e10,Dee,\u{1F600}product,2024-01-01,2024-02-01,,EUR', // no amount
  'e11,Eve,Pro,2024-01-01,2024-02-01,5.00,', // no currency
  ',Fay,,2023-12-31,2024-01-01,3.33,GBP', // no contractId
  'e12,Gus,Pro,2024-01-31,2024-03-01,7.77,GBP',
  'e13,Gus,Pro,2024-02-15,2024-02-20,7.77,GBP', // inside e12's months
];

/** The stored rows, currencies and catalog of a version, as the API's reads would serve them. */
async function storedReads(db: Queryable, versionId: string) {
  const reads = await db.query('SELECT rows, currencies, catalog FROM version_reads WHERE version_id = $1', [versionId]);
  return reads.rows[0];
}

/** A version's monthly figures and cohorts as stored. */
async function storedFigures(db: Queryable, versionId: string) {
  const months = await db.query('SELECT currency, first_month, last_month, months::text FROM version_series WHERE version_id = $1 ORDER BY currency', [versionId]);
  const cohorts = await db.query<{ currency: string; cohorts: string | null; cohorts_zstd: Buffer | null }>('SELECT currency, cohorts, cohorts_zstd FROM version_cohorts WHERE version_id = $1 ORDER BY currency', [versionId]);
  return { months: months.rows, cohorts: await Promise.all(cohorts.rows.map(async (r) => ({ currency: r.currency, cohorts: await storedText(r.cohorts, r.cohorts_zstd) }))) };
}

/** The rows of a CSV with the contract's header, as the reference takes them (cells trimmed, empty as absent). */
function referenceRows(csv: string): ReferenceRow[] {
  const [header, ...records] = csvParse(csv.replace(/^\uFEFF/, ''), ',') as string[][];
  const at = (name: string) => header!.findIndex((h) => h.trim().toLowerCase() === name.toLowerCase());
  const cell = (r: string[], name: string) => (at(name) < 0 ? undefined : r[at(name)]?.trim() || undefined);
  return records
    .filter((r) => Array.isArray(r) && r.some((c) => c.trim() !== ''))
    .map((r) => ({ customer: cell(r, 'customer')!, startDate: cell(r, 'startDate'), endDate: cell(r, 'endDate'), amount: cell(r, 'amount')?.replace(/^0+(?=\d)/, ''), currency: cell(r, 'currency') }));
}

/** The dataset's metrics, cohorts and customers (for a few months) equal the reference's figures for the file. */
async function expectReferenceFigures(svc: TestService, key: string, ds: string, csv: string): Promise<void> {
  const ref = referenceFigures(referenceRows(csv));
  const metrics = (await svc.request(`/v1/datasets/${ds}/metrics`, { key })).json;
  const differs = metrics.monthly.findIndex((m: unknown, i: number) => JSON.stringify(m) !== JSON.stringify(ref.monthly[i]));
  expect(metrics.monthly[differs], `month ${differs}`).to.deep.equal(ref.monthly[differs]);
  expect(metrics.monthly).to.deep.equal(ref.monthly);
  const cohorts = (await svc.request(`/v1/datasets/${ds}/cohorts`, { key })).json;
  expect(cohorts.data).to.deep.equal(ref.cohorts);
  const months = [...ref.customersByMonth.keys()];
  for (const month of [months[0], months[Math.floor(months.length / 2)], months.at(-1)].filter((m) => m !== undefined)) {
    const listed: unknown[] = [];
    let cursor: string | null = null;
    do {
      const page: Reply = await svc.request(`/v1/datasets/${ds}/customers?month=${month}&limit=100${cursor ? `&cursor=${cursor}` : ''}`, { key });
      expect(page.status, page.text).to.equal(200);
      listed.push(...page.json.data.map(({ object: _o, ...rest }: { object: string }) => rest));
      cursor = page.json.nextCursor;
    } while (cursor);
    const expected = ref.customersByMonth.get(month)!.slice().sort((a, b) => (a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : Buffer.compare(Buffer.from(a.customer), Buffer.from(b.customer))));
    const at = listed.findIndex((m, i) => JSON.stringify(m) !== JSON.stringify(expected[i]));
    expect([listed.length, listed[at]], `${month}: customer ${at}`).to.deep.equal([expected.length, expected[at]]);
    // Filtered by movement (and by currency): the same customers, those of that movement.
    for (const movement of ['newBusiness', 'expansion', 'contraction', 'churn', 'reactivation', 'retained']) {
      const currency = expected[0]?.currency ?? 'EUR';
      const filtered = (await svc.request(`/v1/datasets/${ds}/customers?month=${month}&movement=${movement}&currency=${currency}&limit=100`, { key })).json;
      const want = expected.filter((e) => e.movement === movement && e.currency === currency).slice(0, 100);
      expect(filtered.data.map(({ object: _o, ...rest }: { object: string }) => rest), `${month} ${movement} ${currency}`).to.deep.equal(want);
    }
  }
}

describe('metrics and catalog', () => {
  let key: string;
  /** How each version the worker built ended, by version id. */
  const built = new Map<string, BuildSummary>();
  const svc = useService({ onBuilt: (versionId, summary) => built.set(versionId, summary) });
  before(async () => {
    ({ key } = await svc.tenant());
  });

  it('when the dataset is missing or has no active version, then metrics and catalog answer the same 404', async () => {
    const ds = await newDataset(svc, key);
    for (const read of ['metrics', 'catalog']) {
      const empty = await svc.request(`/v1/datasets/${ds}/${read}`, { key });
      const missing = await svc.request(`/v1/datasets/ds_00000000000000000000/${read}`, { key });
      expect(empty.status).to.equal(404);
      expect(empty.json.type).to.equal(`${svc.config.errorsBase}/not-found`);
      const { instance: a, ...restEmpty } = empty.json;
      const { instance: b, ...restMissing } = missing.json;
      expect(restEmpty).to.deep.equal(restMissing);
      expect(a).to.equal(`/v1/datasets/${ds}/${read}`);
      expect(b).to.equal(`/v1/datasets/ds_00000000000000000000/${read}`);
    }
    expect((await svc.request(`/v1/datasets/${ds}`, { key })).json.activeVersionId).to.equal(null);
  });

  it('when the worker builds a file past the express lane, then its rows are counted on a tally thread only from TALLY_THREAD_BYTES, which alone streams the customers\' rows', async function () {
    this.timeout(120_000);
    const [smaller, larger] = [realisticCsv(20_000), realisticCsv(170_000)];
    expect(Buffer.byteLength(smaller)).to.be.within(EXPRESS_BUILD_MAX_BYTES + 1, TALLY_THREAD_BYTES - 1);
    expect(Buffer.byteLength(larger)).to.be.at.least(TALLY_THREAD_BYTES);
    for (const [csv, onThread] of [[smaller, false], [larger, true]] as const) {
      const ds = await newDataset(svc, key);
      const reply = await postCsv(svc, key, ds, csv, { wait: 60 });
      expect(reply.status, reply.text).to.equal(201);
      const summary = await eventually(() => built.get(reply.json.id), (s) => s !== undefined);
      // Only a tally thread streams the customers' rows as its book makes them.
      expect(summary, `${Buffer.byteLength(csv)} bytes`).to.include({ outcome: 'active', readsIn: 'node', customersStreamed: onThread });
    }
  });

  it('when contracts are loaded, then the monthly series holds hand-computed month-end figures, movements and rates', async () => {
    const ds = await newDataset(svc, key);
    const csv = [
      HEADER,
      // 1200 over 2026-01-01..2026-12-31: twelve whole months → 100.00 a month, at every month end of 2026.
      'a1,Acme,Pro,2026-01-01,2026-12-31,1200.00,EUR',
      // 300 over 2026-03-01..2026-05-31: three whole months → 100.00 a month.
      'b1,Beta,Lite,2026-03-01,2026-05-31,300.00,EUR',
      // Beta again after a month without: churns in June, reactivates in July, churns in August.
      'b2,Beta,Lite,2026-07-01,2026-07-31,31.00,EUR',
      // One day that holds no month end: in no monthly figure, but in rows and currencies.
      'u1,Uno,,2026-02-10,2026-02-10,10.00,USD',
    ].join('\n');
    expect((await postCsv(svc, key, ds, csv)).status).to.equal(201);
    const m = (await svc.request(`/v1/datasets/${ds}/metrics`, { key })).json;
    expect(m.rows).to.deep.equal({ total: 4, contributing: 4, excluded: { startDate: 0, endDate: 0, amount: 0, currency: 0 } });
    expect(m.currencies).to.deep.equal([
      { currency: 'EUR', contracts: 3, customers: 2, totalValue: '1531.00' },
      { currency: 'USD', contracts: 1, customers: 1, totalValue: '10.00' },
    ]);
    expect(m.monthly.map((r: { month: string; currency: string }) => `${r.month} ${r.currency}`)).to.deep.equal(
      ['01', '02', '03', '04', '05', '06', '07', '08', '09', '10', '11', '12'].map((mm) => `2026-${mm} EUR`).concat('2027-01 EUR'),
    );
    const at = (month: string) => m.monthly.find((r: { month: string }) => r.month === month);
    const none = { customers: 0, mrr: '0.00' };
    expect(at('2026-01')).to.deep.equal({
      month: '2026-01', currency: 'EUR', activeContracts: 1, activeCustomers: 1, mrr: '100.00', arr: '1200.00', arpa: '100.00',
      movements: { newBusiness: { customers: 1, mrr: '100.00' }, expansion: none, contraction: none, churn: none, reactivation: none, netNewMrr: '100.00' },
      rates: { customerChurn: null, grossMrrChurn: null, netRevenueRetention: null, grossRevenueRetention: null },
    });
    expect(at('2026-03')).to.deep.include({ activeContracts: 2, activeCustomers: 2, mrr: '200.00', arpa: '100.00' });
    expect(at('2026-03').movements.newBusiness).to.deep.equal({ customers: 1, mrr: '100.00' });
    expect(at('2026-06')).to.deep.include({ activeContracts: 1, activeCustomers: 1, mrr: '100.00' });
    expect(at('2026-06').movements).to.deep.include({ churn: { customers: 1, mrr: '100.00' }, netNewMrr: '-100.00' });
    expect(at('2026-06').rates).to.deep.include({ customerChurn: '0.5000', grossMrrChurn: '0.5000' });
    expect(at('2026-07')).to.deep.include({ activeContracts: 2, activeCustomers: 2, mrr: '131.00', arpa: '65.50' });
    expect(at('2026-07').movements.reactivation).to.deep.equal({ customers: 1, mrr: '31.00' });
    expect(at('2026-08').movements.churn).to.deep.equal({ customers: 1, mrr: '31.00' });
    // A year after January 2026, Acme (100.00 then) has none: net and gross revenue retention 0.
    expect(at('2027-01')).to.deep.include({ activeContracts: 0, activeCustomers: 0, mrr: '0.00', arpa: null });
    expect(at('2027-01').rates).to.deep.equal({ customerChurn: '1.0000', grossMrrChurn: '1.0000', netRevenueRetention: '0.0000', grossRevenueRetention: '0.0000' });
    // A slice shows the same figures as the whole.
    const sliced = (await svc.request(`/v1/datasets/${ds}/metrics?from=2026-06&to=2026-07`, { key })).json;
    expect(sliced.monthly).to.deep.equal([at('2026-06'), at('2026-07')]);
    const bad = await svc.request(`/v1/datasets/${ds}/metrics?from=2026-13`, { key });
    expect(bad.status).to.equal(400);
    await expectReferenceFigures(svc, key, ds, csv);
  });

  it('when a figure ends in a half cent, then it rounds half away from zero, each figure on its own', async () => {
    const ds = await newDataset(svc, key);
    // 0.24 over one day, the month's last: 0.24 × 30.4375 = 7.305 a month → 7.31 (half-even would give 7.30);
    // in February it churns: net new MRR −7.305 → −7.31.
    expect((await postCsv(svc, key, ds, `${HEADER}\nh1,H,,2026-01-31,2026-01-31,0.24,EUR\n`)).status).to.equal(201);
    const m = (await svc.request(`/v1/datasets/${ds}/metrics`, { key })).json;
    expect(m.monthly.map((r: { mrr: string }) => r.mrr)).to.deep.equal(['7.31', '0.00']);
    expect(m.monthly[0].arr).to.equal('87.66'); // 12 × 7.305 = 87.66 exactly
    expect(m.monthly[1].movements.netNewMrr).to.equal('-7.31');
    // Three annual contracts of 0.01, 0.01 and 0.04: 1/12 + 1/12 + 4/12 = half a cent → 0.01.
    const ds2 = await newDataset(svc, key);
    const thirds = [HEADER, 't1,T,,2026-01-01,2026-12-31,0.01,EUR', 't2,T,,2026-01-01,2026-12-31,0.01,EUR', 't3,U,,2026-01-01,2026-12-31,0.04,EUR'].join('\n');
    expect((await postCsv(svc, key, ds2, thirds)).status).to.equal(201);
    expect((await svc.request(`/v1/datasets/${ds2}/metrics`, { key })).json.monthly[0].mrr).to.equal('0.01');
  });

  it('when cohorts or customers are asked with a bad month, movement, currency or cursor, then 400 bad-request naming the field; with nothing servable, the spec’s 404', async () => {
    const ds = await newDataset(svc, key);
    for (const path of ['cohorts', 'customers?month=2026-01']) {
      const none = await svc.request(`/v1/datasets/${ds}/${path}`, { key });
      expect(none.status, path).to.equal(404);
      expect(none.json.type).to.equal(`${svc.config.errorsBase}/not-found`);
    }
    expect((await postCsv(svc, key, ds, `${HEADER}\nq1,Q,,2026-01-01,2026-12-31,1200.00,EUR\n`)).status).to.equal(201);
    for (const [query, field] of [
      ['customers', 'month'],
      ['customers?month=2026-13', 'month'],
      ['customers?month=2026-1', 'month'],
      ['customers?month=2026-01&movement=upsell', 'movement'],
      ['customers?month=2026-01&currency=eur', 'currency'],
      ['customers?month=2026-01&cursor=not-a-cursor', 'cursor'],
      ['customers?month=2026-01&limit=0', 'limit'],
      ['cohorts?currency=EURO', 'currency'],
    ]) {
      const bad = await svc.request(`/v1/datasets/${ds}/${query}`, { key });
      expect(bad.status, query).to.equal(400);
      expect(bad.json.type).to.equal(`${svc.config.errorsBase}/bad-request`);
      expect(bad.json.errors.map((e: { field: string }) => e.field), query).to.include(field);
    }
    const fine = (await svc.request(`/v1/datasets/${ds}/customers?month=2026-06`, { key })).json;
    expect(fine.data).to.deep.equal([{ object: 'customer_month', customer: 'Q', currency: 'EUR', month: '2026-06', previousMrr: '100.00', mrr: '100.00', movement: 'retained' }]);
    const cohorts = (await svc.request(`/v1/datasets/${ds}/cohorts`, { key })).json;
    expect(cohorts).to.include({ object: 'cohorts', datasetId: ds });
    expect(cohorts.data[0]).to.include({ currency: 'EUR', cohort: '2026-01', customers: 1, mrr: '100.00' });
    expect(cohorts.data[0].months.at(-1)).to.deep.equal({ month: '2027-01', customers: 0, mrr: '0.00' });
  });

  it('when the catalog is read, then each field has type, gating, present, distinct, min and max, and every product is listed', async () => {
    const ds = await newDataset(svc, key);
    const csv = [
      HEADER,
      'a,Acme,Pro,2026-01-01,2026-12-31,100,EUR',
      'b,Acme,Lite,2026-02-01,2026-03-31,50.5,EUR',
      'c,Beta,Pro,,2026-04-30,0,USD',
      ',Gamma,,2025-12-01,,,',
    ].join('\n');
    expect((await postCsv(svc, key, ds, csv)).status).to.equal(201);
    const c = (await svc.request(`/v1/datasets/${ds}/catalog`, { key })).json;
    expect(c).to.include({ object: 'catalog', datasetId: ds, rowCount: 4 });
    const f = Object.fromEntries(c.fields.map((x: { name: string }) => [x.name, x]));
    expect(c.fields.map((x: { name: string }) => x.name)).to.deep.equal(['contractId', 'customer', 'product', 'startDate', 'endDate', 'amount', 'currency']);
    expect(f.contractId).to.deep.equal({ name: 'contractId', type: 'string', gating: false, present: 3, distinct: 3, min: null, max: null });
    expect(f.customer).to.include({ present: 4, distinct: 3 });
    expect(f.startDate).to.deep.equal({ name: 'startDate', type: 'date', gating: true, present: 3, distinct: 3, min: '2025-12-01', max: '2026-02-01' });
    expect(f.amount).to.deep.equal({ name: 'amount', type: 'decimal', gating: true, present: 3, distinct: 3, min: '0.00', max: '100.00' });
    expect(f.currency).to.deep.equal({ name: 'currency', type: 'currency', gating: true, present: 3, distinct: 2, min: null, max: null });
    expect(c.products).to.deep.equal([
      { product: 'Lite', contracts: 1, customers: 1 },
      { product: 'Pro', contracts: 2, customers: 2 },
    ]);
  });

  it('when amounts and dates come in every shape the contract allows, then they are stored exactly (binary COPY)', async () => {
    const amounts = ['0', '0.5', '0.05', '7', '007.50', '10000', '10000.01', '9999.99', '123456789012345678.99', '100000000.1', '00.00'];
    const stored = ['0.00', '0.50', '0.05', '7.00', '7.50', '10000.00', '10000.01', '9999.99', '123456789012345678.99', '100000000.10', '0.00'];
    const dates = ['0001-01-01', '1999-12-31', '2000-01-01', '2000-02-29', '1970-01-01', '9999-12-31'];
    const csv = [HEADER, ...amounts.map((a, i) => `s${i},S,,${dates[i % dates.length]},${dates[i % dates.length]},${a},EUR`)].join('\n');
    const ds = await newDataset(svc, key);
    const reply = await postCsv(svc, key, ds, csv);
    expect(reply.status, reply.text).to.equal(201);
    const { rows } = await svc.db.query(
      `SELECT amount::text AS amount, start_date::text AS day FROM contract_rows WHERE version_id = $1 ORDER BY row_number`,
      [reply.json.id],
    );
    expect(rows.map((r) => r.amount)).to.deep.equal(stored);
    expect(rows.map((r) => r.day)).to.deep.equal(amounts.map((_, i) => dates[i % dates.length]));
  });

  describe('counted in Node while the rows stream', () => {
    for (const [name, csv] of [
      ['tricky rows', [HEADER, ...TRICKY_ROWS].join('\n')],
      ['5,000 generated rows with tricky rows among them', contractsCsv(5000) + TRICKY_ROWS.join('\n')],
      ['a header and no rows', HEADER],
      ['4,000 rows shaped like an export (names in many scripts, quoted cells, multi-year terms)', realisticCsv(4000)],
      ['3,000 rows shaped like an export, every field quoted, CRLF', realisticCsv(3000, { quoteAll: true, crlf: true })],
      // Several batches to the tally's thread, more than go round at once: the build waits for them to come back.
      ['40,000 rows shaped like an export', realisticCsv(40_000)],
      // One-day contracts of large amounts, all in one month: their monthly values sum past 2^53 units.
      ['2,000 one-day contracts of 250,000.00 in one month', [HEADER, ...Array.from({ length: 2000 }, (_, i) => `d${i},Customer ${i % 50},Pro,2025-03-${String(1 + (i % 28)).padStart(2, '0')},2025-03-${String(1 + (i % 28)).padStart(2, '0')},250000.00,EUR`)].join('\n')],
      // Past the 32 products a customer's bits hold: the rest are counted apart.
      ['customers with 40 products each', [HEADER, ...Array.from({ length: 800 }, (_, i) => `p${i},Customer ${i % 7},Product ${i % 40},2025-01-0${1 + (i % 9)},2025-0${1 + (i % 9)}-28,${10 + i}.50,${i % 3 ? 'EUR' : 'USD'}`)].join('\n')],
    ] as const) {
      it(`when a version is built from ${name}, then its stored rows, currencies and catalog equal the SQL computation over its stored rows, and its monthly figures the reference`, async () => {
        const ds = await newDataset(svc, key);
        const reply = await postCsv(svc, key, ds, csv);
        expect(reply.status, reply.text).to.equal(201);
        // The worker hears how the build ended once the version is active (the 201 may come first).
        expect(await eventually(() => built.get(reply.json.id)?.readsIn, (readsIn) => readsIn !== undefined)).to.equal('node');
        const tallied = await storedReads(svc.db, reply.json.id);
        expect(tallied.catalog.rowCount).to.equal(csv.trim().split('\n').length - 1);
        // The SQL path (the fallback when the tally outgrows its limits), over the same stored rows.
        const client = await svc.db.connect();
        let fromSql;
        try {
          await client.query('BEGIN');
          await client.query('DELETE FROM version_reads WHERE version_id = $1', [reply.json.id]);
          const distinctContractIds = await findDuplicates(client, reply.json.id, () => expect.fail('no duplicates'));
          await computeReads(client, reply.json.id, { distinctContractIds });
          fromSql = await storedReads(client, reply.json.id);
        } finally {
          await client.query('ROLLBACK');
          client.release();
        }
        expect(tallied).to.deep.equal(fromSql);
        if (csv.length < 500_000) await expectReferenceFigures(svc, key, ds, csv);
      });
    }

    it('when the rows outgrow what the tally may hold, then the build computes the same figures in SQL', async () => {
      // Built in this process, with lowered limits, rather than by a worker.
      const local = await startService({ worker: false });
      try {
        const csv = contractsCsv(3000) + TRICKY_ROWS.join('\n');
        const tenant = await local.tenant();
        const ds = await newDataset(local, tenant.key);
        const inNode = await postCsv(local, tenant.key, ds, csv, { wait: 0 });
        expect(await buildNow(local, inNode.json.id)).to.include({ outcome: 'active', readsIn: 'node' });
        const inSql = await postCsv(local, tenant.key, ds, csv, { wait: 0 });
        const tallyLimits = { ...DEFAULT_TALLY_LIMITS, customers: 10, setSlots: 1 << 12 };
        expect(await buildNow(local, inSql.json.id, { tallyLimits })).to.include({ outcome: 'active', readsIn: 'sql' });
        expect(await storedReads(local.db, inSql.json.id)).to.deep.equal(await storedReads(local.db, inNode.json.id));
      } finally {
        await local.stop();
      }
    });

    it('when the contracts and the customers\' lines outgrow what the tally holds in memory, then they spill to temporary files and the figures are the same', async function () {
      // Two builds of 6,000 rows, one spilling every 500 contracts, and the reference: 25-40 s on a busy 2-core machine.
      this.timeout(120_000);
      const local = await startService({ worker: false });
      try {
        const csv = realisticCsv(6000);
        const tenant = await local.tenant();
        const held = await newDataset(local, tenant.key);
        const inMemory = await postCsv(local, tenant.key, held, csv, { wait: 0 });
        expect(await buildNow(local, inMemory.json.id)).to.include({ outcome: 'active', readsIn: 'node' });
        const spilled = await newDataset(local, tenant.key);
        const onDisk = await postCsv(local, tenant.key, spilled, csv, { wait: 0 });
        const tallyLimits = { ...DEFAULT_TALLY_LIMITS, contractsInMemory: 500, linesInMemory: 2048 };
        expect(await buildNow(local, onDisk.json.id, { tallyLimits })).to.include({ outcome: 'active', readsIn: 'node' });
        for (const read of ['metrics', 'cohorts', 'customers?month=2022-06&limit=100']) {
          const a = (await local.request(`/v1/datasets/${held}/${read}`, { key: tenant.key })).json;
          const b = (await local.request(`/v1/datasets/${spilled}/${read}`, { key: tenant.key })).json;
          expect(b.data ?? b.monthly, read).to.deep.equal(a.data ?? a.monthly).and.not.be.empty;
        }
        await expectReferenceFigures(local, tenant.key, spilled, csv);
      } finally {
        await local.stop();
      }
    });

    it('when a tally thread counts the rows, then the customers\' rows go to PostgreSQL as its book makes them, to the shared table or to one of the version\'s own, and every read is the same as when they are held and stored after', async function () {
      this.timeout(120_000);
      const local = await startService({ worker: false });
      const thread = new TallyThread(192);
      try {
        // More rows than a batch (a tally thread counts them), and more customers' rows than the flow lets ahead.
        const csv = realisticCsv(20_000);
        const tenant = await local.tenant();
        const streamed = await newDataset(local, tenant.key);
        const first = await postCsv(local, tenant.key, streamed, csv, { wait: 0 });
        expect(await buildNow(local, first.json.id, { tallyFeed: (limits) => thread.feed(limits) })).to.include({ outcome: 'active', readsIn: 'node', customersStreamed: true });
        const held = await newDataset(local, tenant.key);
        const second = await postCsv(local, tenant.key, held, csv, { wait: 0 });
        expect(await buildNow(local, second.json.id)).to.include({ outcome: 'active', readsIn: 'node', customersStreamed: false });
        // Into a table of the version's own (sql/029), indexed once full.
        const apart = await newDataset(local, tenant.key);
        const third = await postCsv(local, tenant.key, apart, csv, { wait: 0 });
        // Its book walked by the tally thread and the build's own thread, partitions given as they are wanted (bookShare.ts).
        // Its customers looked up by month and movement by index (as a table of LOOKUP_INDEX_ROWS or more is); the next one's found by a scan.
        const apartBuild = await buildNow(local, third.json.id, { tallyFeed: (limits) => thread.feed(limits), customersApartRows: 20_000, bookShareRows: 20_000, lookupIndexRows: 1 });
        expect(apartBuild).to.include({ outcome: 'active', customersStreamed: true, customersApart: true });
        expect(apartBuild.bookShared).to.be.within(3, 63);
        // Counted in the build's thread (a file smaller than TALLY_THREAD_BYTES): held, then to a table of its own all the same.
        const heldApart = await newDataset(local, tenant.key);
        const fourth = await postCsv(local, tenant.key, heldApart, csv, { wait: 0 });
        expect(await buildNow(local, fourth.json.id, { customersApartRows: 20_000 })).to.include({ outcome: 'active', readsIn: 'node', customersStreamed: false, customersApart: true });
        const count = async (versionId: string, table = 'version_customers') => Number((await local.db.query(`SELECT count(*) AS n FROM ${table} WHERE version_id = $1`, [versionId])).rows[0].n);
        expect(await count(first.json.id)).to.equal(await count(second.json.id)).and.be.above(1000);
        const indexesOf = async (own: string) =>
          (await local.db.query<{ def: string }>(`SELECT regexp_replace(indexdef, '^.* USING ', '') AS def FROM pg_indexes WHERE schemaname = 'version_customers_apart' AND tablename = $1 ORDER BY 1`, [own])).rows.map((r) => r.def);
        expect(await indexesOf(third.json.id)).to.deep.equal(['btree (currency, customer)', 'btree (first_month)', 'btree (last_month)', 'gin (moves)']);
        expect(await indexesOf(fourth.json.id)).to.deep.equal(['btree (currency, customer)']);
        for (const own of [third.json.id, fourth.json.id]) {
          expect([await count(own), await count(own, `version_customers_apart."${own}"`)]).to.deep.equal([0, await count(second.json.id)]);
          // Analyzed before the commit, from a small sample of the columns its reads are planned by.
          const { rows: stats } = await local.db.query<{ attname: string; target: number; analyzed: boolean }>(
            `SELECT a.attname, coalesce(a.attstattarget, -1)::int AS target, EXISTS (SELECT FROM pg_stats s WHERE s.schemaname = 'version_customers_apart' AND s.tablename = $1 AND s.attname = a.attname) AS analyzed
             FROM pg_attribute a WHERE a.attrelid = format('version_customers_apart.%I', $1::text)::regclass AND a.attname IN ('version_id', 'currency', 'customer', 'first_month', 'last_month') ORDER BY a.attnum`,
            [own],
          );
          // (Not the others': autovacuum may analyze the whole table once it is committed.)
          expect(stats).to.deep.equal(['version_id', 'currency', 'customer', 'first_month', 'last_month'].map((attname) => ({ attname, target: 10, analyzed: true })));
        }
        // Rates for two months, so that the customers read in a reporting currency has figures to convert, and lines it cannot.
        const rates = [['2022-06', 'USD', '0.9'], ['2022-06', 'GBP', '1.17'], ['2022-05', 'USD', '0.91']].map(([month, currency, rate]) => ({ month, currency, rate }));
        expect((await local.request('/v1/exchange-rates', { key: tenant.key, json: { base: 'EUR', rates } })).status).to.equal(201);
        const reads = ['metrics', 'cohorts', 'customers?month=2022-06&limit=100', 'customers?month=2024-01&movement=churn&limit=100', 'customers?month=2022-06&reportingCurrency=EUR&limit=100'];
        for (const month of ['2019-01', '2022-06', '2025-12']) {
          for (const movement of ['newBusiness', 'expansion', 'contraction', 'churn', 'reactivation', 'retained']) reads.push(`customers?month=${month}&movement=${movement}&limit=20`);
        }
        for (const read of reads) {
          const a = (await local.request(`/v1/datasets/${held}/${read}`, { key: tenant.key })).json;
          for (const other of [streamed, apart, heldApart]) {
            const b = (await local.request(`/v1/datasets/${other}/${read}`, { key: tenant.key })).json;
            expect(b.data ?? b.monthly, read).to.deep.equal(a.data ?? a.monthly);
          }
          if (!read.includes('movement=')) expect(a.data ?? a.monthly, read).not.to.be.empty;
          // The next page too, where there is one.
          if (a.nextCursor) {
            const next = (await local.request(`/v1/datasets/${held}/${read}&cursor=${a.nextCursor}`, { key: tenant.key })).json;
            for (const other of [apart, heldApart]) {
              const apartNext = (await local.request(`/v1/datasets/${other}/${read}&cursor=${a.nextCursor}`, { key: tenant.key })).json;
              expect(apartNext.data, `${read}, page 2`).to.deep.equal(next.data);
            }
          }
        }
      } finally {
        await thread.close();
        await local.stop();
      }
    });

    it('when a tally thread has had no build for its idle time, then it ends, and the next build of more than a batch starts another', async function () {
      this.timeout(60_000);
      const local = await startService({ worker: false });
      const thread = new TallyThread(64, 300);
      try {
        const tenant = await local.tenant();
        const ds = await newDataset(local, tenant.key);
        for (let i = 0; i < 2; i++) {
          const posted = await postCsv(local, tenant.key, ds, contractsCsv(10_000), { wait: 0 });
          expect(await buildNow(local, posted.json.id, { tallyFeed: (limits) => thread.feed(limits) })).to.include({ outcome: 'active', readsIn: 'node' });
          expect(thread.running).to.equal(true);
          await eventually(() => thread.running, (running) => !running, { timeoutMs: 5_000 });
        }
      } finally {
        await thread.close();
        await local.stop();
      }
    });

    /**
     * A service of its own with a version of `rows` realistic rows whose customers are in a table of
     * its own (`table`), and a connection (`holder`) to hold it with; all let go afterwards.
     */
    async function withOwnTable(
      rows: number,
      run: (v: { local: TestService; key: string; ds: string; versionId: string; table: string; holder: PoolClient; built: BuildSummary }) => Promise<void>,
    ): Promise<void> {
      const local = await startService({ worker: false });
      const thread = new TallyThread(192);
      const holder = await local.db.connect();
      try {
        const { key } = await local.tenant();
        const ds = await newDataset(local, key);
        const versionId: string = (await postCsv(local, key, ds, realisticCsv(rows), { wait: 0 })).json.id;
        const built = await buildNow(local, versionId, { tallyFeed: (limits) => thread.feed(limits), customersApartRows: 1 });
        expect(built).to.include({ outcome: 'active', customersApart: true });
        await run({ local, key, ds, versionId, table: `version_customers_apart."${versionId}"`, holder, built });
      } finally {
        await holder.query('ROLLBACK').catch(() => {});
        holder.release();
        await thread.close();
        await local.stop();
      }
    }

    it('when a version\'s own table of customers is dropped by its purge while a customers read waits on it, then the read answers the purged version\'s 404, not a 500', async function () {
      this.timeout(60_000);
      await withOwnTable(10_000, async ({ local, key, ds, versionId, table, holder, built }) => {
        expect(built).to.include({ customersStreamed: true, bookShared: 0 });
        // The purge takes the table first; the read finds the version not purged, then waits for the table.
        await holder.query('BEGIN');
        await holder.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
        const read = local.request(`/v1/datasets/${ds}/customers?month=2022-06&limit=10`, { key });
        await eventually(
          () => local.db.query(`SELECT 1 FROM pg_locks WHERE relation = $1::regclass AND NOT granted`, [table]),
          (r) => r.rowCount === 1,
        );
        await holder.query(`UPDATE versions SET rows_purged_at = clock_timestamp(), customers_apart = false WHERE id = $1`, [versionId]);
        await holder.query(`DROP TABLE ${table}`);
        await holder.query('COMMIT');
        const answer = await read;
        expect(answer.status, answer.text).to.equal(404);
        expect(answer.json.detail).to.include('its rows were purged');
      });
    });

    it('when a read holds a purged version\'s own table of customers, then the purge waits a while, changes nothing of it and goes on with the others, and the next run drops it', async function () {
      this.timeout(60_000);
      await withOwnTable(3_000, async ({ local, key, ds, versionId, table, holder }) => {
        const next = await postCsv(local, key, ds, realisticCsv(10), { wait: 0 });
        expect(await buildNow(local, next.json.id)).to.include({ outcome: 'active' }); // the first is superseded
        await local.db.query(`UPDATE versions SET superseded_at = now() - interval '31 days' WHERE id = $1`, [versionId]);
        // A read of the table, its transaction still open (as the basis for conversion reads every customer).
        await holder.query('BEGIN');
        await holder.query(`SELECT 1 FROM ${table} LIMIT 1`);
        const started = performance.now();
        expect(await purgeVersionsPastRetention(local.db, local.blobs, 30, { lockTimeoutMs: 300 })).to.include({ versions: 0, held: 1 });
        expect(performance.now() - started).to.be.below(10_000);
        const state = async () =>
          (await local.db.query(`SELECT to_regclass($2) IS NOT NULL AS kept, customers_apart, purge_finished_at IS NOT NULL AS finished FROM versions WHERE id = $1`, [versionId, table])).rows[0];
        expect(await state()).to.deep.equal({ kept: true, customers_apart: true, finished: false });
        await holder.query('COMMIT');
        expect(await purgeVersionsPastRetention(local.db, local.blobs, 30, { lockTimeoutMs: 300 })).to.include({ versions: 1, held: 0 });
        expect(await state()).to.deep.equal({ kept: false, customers_apart: false, finished: true });
      });
    });

    it('when the tally thread nears the end of its heap mid-build, then it gives up in time, the build computes the same figures in SQL, and the thread goes on', async function () {
      this.timeout(90_000);
      const local = await startService({ worker: false });
      // A thread of 16 MiB: enough to start and tally a file of 10,000 rows (with room to spare:
      // a thread of 12 MiB sometimes ran out on a small file in CI), not the monthly figures of
      // 14,000 contracts each in a month of its own (those of 8,000 fit). A thread that reached
      // its limit was ended by Node only for some shapes of allocation, and for others took this
      // process down with it: the tally looks at its heap's room (shared/platform/heapRoom.ts)
      // and gives up first.
      const starved = new TallyThread(16);
      const roomy = new TallyThread(192);
      const currencies = ['EUR', 'USD', 'GBP', 'CHF', 'SEK', 'JPY', 'PLN', 'NOK', 'DKK', 'CZK'];
      const month = (i: number) => `${1000 + Math.floor(i / 12)}-${String(1 + (i % 12)).padStart(2, '0')}`;
      // Each contract holds one month end, of a month of its own.
      const manyMonths = [HEADER, ...Array.from({ length: 14_000 }, (_, i) => `m${i},Customer ${i % 5000},Pro,${month(i)}-01,${month(i + 1)}-01,${10 + (i % 1000)}.25,${currencies[i % 10]}`)].join('\n');
      try {
        const tenant = await local.tenant();
        const ds = await newDataset(local, tenant.key);
        // Rows that fit in one batch are counted in the build's thread: the tally thread is not started.
        const small = await postCsv(local, tenant.key, ds, contractsCsv(10), { wait: 0 });
        expect(await buildNow(local, small.json.id, { tallyFeed: (limits) => starved.feed(limits) })).to.include({ outcome: 'active', readsIn: 'node' });
        expect(starved.running).to.equal(false);
        const twoBatches = await postCsv(local, tenant.key, ds, contractsCsv(10_000), { wait: 0 });
        expect(await buildNow(local, twoBatches.json.id, { tallyFeed: (limits) => starved.feed(limits) })).to.include({ outcome: 'active', readsIn: 'node' });
        expect(starved.running).to.equal(true);
        const inSql = await postCsv(local, tenant.key, ds, manyMonths, { wait: 0 });
        const starvedBuild = await buildNow(local, inSql.json.id, { tallyFeed: (limits) => starved.feed(limits) });
        expect(starvedBuild).to.include({ outcome: 'active', readsIn: 'sql' });
        expect(starvedBuild.tallyGaveUpOn).to.equal("the tally thread: the tally: live objects near the thread's heap limit of 16 MiB");
        const inNode = await postCsv(local, tenant.key, ds, manyMonths, { wait: 0 });
        expect(await buildNow(local, inNode.json.id, { tallyFeed: (limits) => roomy.feed(limits) })).to.include({ outcome: 'active', readsIn: 'node' });
        expect(await storedReads(local.db, inSql.json.id)).to.deep.equal(await storedReads(local.db, inNode.json.id));
        // Its book shared with the build's thread: the tally thread gives up all the same, its helper stops, and SQL computes the same figures.
        const sharedInSql = await postCsv(local, tenant.key, ds, manyMonths, { wait: 0 });
        const sharedStarved = await buildNow(local, sharedInSql.json.id, { tallyFeed: (limits) => starved.feed(limits), customersApartRows: 1, bookShareRows: 1 });
        expect(sharedStarved).to.include({ outcome: 'active', readsIn: 'sql', customersApart: false });
        expect(await storedReads(local.db, sharedInSql.json.id)).to.deep.equal(await storedReads(local.db, inNode.json.id));
        expect(await storedFigures(local.db, sharedInSql.json.id)).to.deep.equal(await storedFigures(local.db, inNode.json.id));
        const sharedInNode = await postCsv(local, tenant.key, ds, manyMonths, { wait: 0 });
        const sharedRoomy = await buildNow(local, sharedInNode.json.id, { tallyFeed: (limits) => roomy.feed(limits), customersApartRows: 1, bookShareRows: 1 });
        expect(sharedRoomy).to.include({ outcome: 'active', readsIn: 'node', customersApart: true });
        expect(sharedRoomy.bookShared).to.be.above(0);
        expect(await storedReads(local.db, sharedInNode.json.id)).to.deep.equal(await storedReads(local.db, inNode.json.id));
        expect(await storedFigures(local.db, sharedInNode.json.id)).to.deep.equal(await storedFigures(local.db, inNode.json.id));
        // The thread is still up, and counts the next build of more than a batch.
        expect(starved.running).to.equal(true);
        const after = await postCsv(local, tenant.key, ds, contractsCsv(10_000), { wait: 0 });
        expect(await buildNow(local, after.json.id, { tallyFeed: (limits) => starved.feed(limits) })).to.include({ outcome: 'active', readsIn: 'node' });
        expect(starved.running).to.equal(true);
      } finally {
        await Promise.all([starved.close(), roomy.close()]);
        await local.stop();
      }
    });
  });
});
