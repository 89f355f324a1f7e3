import { expect } from 'chai';
import fc from 'fast-check';
import { HEADER, newDataset, postCsv } from './support/ingest.ts';
import { eventually } from './support/eventually.ts';
import { queues } from '../shared/platform/queue.ts';
import { useService } from './support/service.ts';
import { purgeVersionsPastRetention } from '../shared/domain/versionRetention.ts';
import { bookCsv, books } from './support/books.ts';
import { referenceReporting, referenceReportingCohorts, referenceReportingCustomers, type ReferenceRates, type ReferenceRow } from './support/metricsReference.ts';
import { MetricsBook } from '../shared/figures/book.ts';
import { contractTerm, MOVEMENTS } from '../shared/figures/definitions.ts';
import { packChanges, storedText, unpackChanges } from '../shared/figures/customerChanges.ts';
import { BASIS_JSON_FORMAT, type BasisDoc, type ExactStep, type FxBasis, FxBasisBuilder, packBasis, parseBasisJson, parseCells, unpackBasis } from '../shared/figures/fxBasis.ts';
import { readFxBasis } from '../shared/domain/monthlyFigures.ts';
import { convert, convertCohorts, missingRates, RATE_SCALE } from '../shared/figures/reporting.ts';
import { FIXED } from '../shared/figures/exact.ts';

const none = { customers: 0, mrr: '0.00' };
const ANN_AND_BOB = [
  HEADER,
  // Ann: 100.00 EUR a month January to March, 100.00 USD a month January and February.
  'a1,Ann,Pro,2024-01-01,2024-03-31,300.00,EUR',
  'a2,Ann,Pro,2024-01-01,2024-02-29,200.00,USD',
  // Bob: 200.00 USD a month in February and March; churns in April.
  'b1,Bob,Pro,2024-02-01,2024-03-31,400.00,USD',
].join('\n');
const NO_RETENTION = { netRevenueRetention: null, grossRevenueRetention: null };

/** Terms of 45, 100 and 367 days in two currencies: denominators that FIXED does not hold. */
const ODD_TERMS_CSV = [HEADER, 'c1,Cy,Pro,2024-01-01,2024-02-14,450.00,EUR', 'c2,Cy,Pro,2024-01-10,2024-04-18,1000.00,USD', 'c3,Dee,Pro,2024-01-05,2025-01-05,3670.00,USD'].join('\n');

describe('one reporting currency', function () {
  this.timeout(240_000);
  const svc = useService();

  const rates = (k: string, base: string, list: [string, string, string][]) =>
    svc.request('/v1/exchange-rates', { key: k, json: { base, rates: list.map(([month, currency, rate]) => ({ month, currency, rate })) } });
  /** Every page of the customers read, and the missingRates of the first (the same on every page). */
  const allCustomers = async (k: string, ds: string, query: string) => {
    const data: unknown[] = [];
    let missing: unknown;
    let cursor: string | null = null;
    do {
      const reply = await svc.request(`/v1/datasets/${ds}/customers?${query}${cursor ? `&cursor=${cursor}` : ''}`, { key: k });
      expect(reply.status, reply.text).to.equal(200);
      data.push(...reply.json.data);
      missing ??= reply.json.missingRates;
      expect(reply.json.missingRates).to.deep.equal(missing);
      cursor = reply.json.nextCursor;
    } while (cursor);
    return { data, missingRates: missing };
  };
  const metrics = async (k: string, ds: string, query: string) => {
    const reply = await svc.request(`/v1/datasets/${ds}/metrics?${query}`, { key: k });
    expect(reply.status, reply.text).to.equal(200);
    return reply.json;
  };

  describe('sets of rates', () => {
    it('when a set is uploaded as JSON, then it answers 201 fx_…, is listed newest first, read with its rates, and is the event exchange_rates.created', async () => {
      const { key: k } = await svc.tenant();
      const first = await rates(k, 'EUR', [['2024-01', 'USD', '0.9']]);
      expect(first.status, first.text).to.equal(201);
      const made = await rates(k, 'EUR', [
        ['2024-02', 'USD', '0.8123456789'],
        ['2024-01', 'USD', '0.9'],
        ['2024-01', 'GBP', '1.17'],
      ]);
      expect(made.status, made.text).to.equal(201);
      expect(made.json).to.include({ object: 'exchange_rates', base: 'EUR', from: '2024-01', to: '2024-02' });
      expect(made.json.id).to.match(/^fx_/);
      expect(made.json.currencies).to.deep.equal(['GBP', 'USD']);
      expect(made.headers.get('location')).to.equal(`${svc.config.baseUrl}/v1/exchange-rates/${made.json.id}`);
      const one = await svc.request(`/v1/exchange-rates/${made.json.id}`, { key: k });
      expect(one.json).to.deep.equal({
        ...made.json,
        rates: [
          { month: '2024-01', currency: 'GBP', rate: '1.17' },
          { month: '2024-01', currency: 'USD', rate: '0.9' },
          { month: '2024-02', currency: 'USD', rate: '0.8123456789' },
        ],
      });
      const list = await svc.request('/v1/exchange-rates?limit=1', { key: k });
      expect(list.json.data).to.deep.equal([made.json]);
      const next = await svc.request(`/v1/exchange-rates?limit=1&cursor=${list.json.nextCursor}`, { key: k });
      expect(next.json).to.deep.equal({ object: 'list', data: [first.json], nextCursor: null });
      const events = await svc.request('/v1/events?type=exchange_rates.created', { key: k });
      expect(events.json.data.map((e: { data: { object: unknown } }) => e.data.object)).to.deep.equal([made.json, first.json]);
    });

    it('when a set is uploaded as CSV, then the base line, an optional header and the records make the same set', async () => {
      const { key: k } = await svc.tenant();
      const made = await svc.request('/v1/exchange-rates', { key: k, body: 'base,EUR\nmonth,currency,rate\n2024-01,USD,0.9\n2024-01,GBP,1.17\n', headers: { 'content-type': 'text/csv' } });
      expect(made.status, made.text).to.equal(201);
      expect(made.json).to.include({ base: 'EUR', from: '2024-01', to: '2024-01' });
      expect((await svc.request(`/v1/exchange-rates/${made.json.id}`, { key: k })).json.rates).to.deep.equal([
        { month: '2024-01', currency: 'GBP', rate: '1.17' },
        { month: '2024-01', currency: 'USD', rate: '0.9' },
      ]);
    });

    it('when records are bad, then one 400 bad-request lists every problem by its place, and nothing is kept', async () => {
      const { key: k } = await svc.tenant();
      const bad = await rates(k, 'EUR', [
        ['2024-13', 'USD', '0.9'],
        ['2024-01', 'usd', '0.9'],
        ['2024-01', 'USD', '0'],
        ['2024-01', 'GBP', '1.12345678901'],
        ['2024-01', 'EUR', '1'],
        ['2024-02', 'USD', '-1'],
        ['2024-03', 'USD', '0.9'],
        ['2024-03', 'USD', '0.8'],
      ]);
      expect(bad.status).to.equal(400);
      expect(bad.json.type).to.equal(`${svc.config.errorsBase}/bad-request`);
      expect(bad.json.errors.map((e: { field: string; code: string }) => `${e.field}:${e.code}`)).to.deep.equal([
        'rates[0].month:invalid',
        'rates[1].currency:invalid',
        'rates[2].rate:invalid',
        'rates[3].rate:invalid',
        'rates[4].currency:invalid',
        'rates[5].rate:invalid',
        'rates[7]:duplicate',
      ]);
      const csv = await svc.request('/v1/exchange-rates', { key: k, body: 'base,eur\n2024-01,USD,x\n2024-01,GBP\n', headers: { 'content-type': 'text/csv' } });
      expect(csv.status).to.equal(400);
      expect(csv.json.errors.map((e: { field: string }) => e.field)).to.deep.equal(['base', 'rates[0].rate', 'rates[1].rate']);
      const shapes = await svc.request('/v1/exchange-rates', { key: k, json: { base: 'EUR', rates: [] } });
      expect([shapes.status, shapes.json.errors[0].field]).to.deep.equal([400, 'rates']);
      const xml = await svc.request('/v1/exchange-rates', { key: k, body: '<rates/>', headers: { 'content-type': 'application/xml' } });
      expect(xml.status).to.equal(415);
      expect((await svc.request('/v1/exchange-rates', { key: k })).json.data).to.deep.equal([]);
      expect((await svc.request('/v1/events?type=exchange_rates.created', { key: k })).json.data).to.deep.equal([]);
    });

    it('when a creation is sent again with its Idempotency-Key, then the answer is replayed and one set is kept', async () => {
      const { key: k } = await svc.tenant();
      const body = { key: k, idempotencyKey: 'rates-once', json: { base: 'EUR', rates: [{ month: '2024-01', currency: 'USD', rate: '0.9' }] } };
      const a = await svc.request('/v1/exchange-rates', body);
      const b = await svc.request('/v1/exchange-rates', body);
      expect(a.status).to.equal(201);
      expect(b.status).to.equal(201);
      expect(b.text).to.equal(a.text);
      expect(b.headers.get('idempotent-replayed')).to.equal('true');
      expect((await svc.request('/v1/exchange-rates', { key: k })).json.data).to.have.length(1);
      expect((await svc.request('/v1/events?type=exchange_rates.created', { key: k })).json.data).to.have.length(1);
    });

    it('when sets are made in test and in live mode, then each mode sees and converts with its own only', async () => {
      const { key: testKey, accountId: acc } = await svc.tenant();
      const liveKey = await svc.key(acc, 'live');
      const testSet = await rates(testKey, 'EUR', [['2024-01', 'USD', '0.5']]);
      expect((await svc.request('/v1/exchange-rates', { key: liveKey })).json.data).to.deep.equal([]);
      expect((await svc.request(`/v1/exchange-rates/${testSet.json.id}`, { key: liveKey })).status).to.equal(404);
      const csv = [HEADER, 'c1,Cy,Pro,2024-01-01,2024-01-31,100.00,USD'].join('\n');
      const liveDs = await newDataset(svc, liveKey);
      expect((await postCsv(svc, liveKey, liveDs, csv)).status).to.equal(201);
      const noSet = await svc.request(`/v1/datasets/${liveDs}/metrics?reportingCurrency=EUR`, { key: liveKey });
      expect([noSet.status, noSet.json.errors?.[0]?.code]).to.deep.equal([400, 'no_exchange_rates']);
      const liveSet = await rates(liveKey, 'EUR', [['2024-01', 'USD', '0.25'], ['2024-02', 'USD', '0.25']]);
      const testDs = await newDataset(svc, testKey);
      expect((await postCsv(svc, testKey, testDs, csv)).status).to.equal(201);
      const inTest = await metrics(testKey, testDs, 'reportingCurrency=EUR&to=2024-01');
      const inLive = await metrics(liveKey, liveDs, 'reportingCurrency=EUR&to=2024-01');
      expect([inTest.reporting.exchangeRatesId, inTest.reporting.monthly[0].mrr]).to.deep.equal([testSet.json.id, '50.00']);
      expect([inLive.reporting.exchangeRatesId, inLive.reporting.monthly[0].mrr]).to.deep.equal([liveSet.json.id, '25.00']);
    });
  });

  describe('the metrics in one currency', () => {
    it('when a customer holds two currencies and another churns, then the figures are the hand-computed ones: the customer is the unit, churn is valued at the churn month\'s rates', async () => {
      const { key: k } = await svc.tenant();
      const ds = await newDataset(svc, k);
      const csv = ANN_AND_BOB;
      expect((await postCsv(svc, k, ds, csv)).status).to.equal(201);
      const before = await svc.request(`/v1/datasets/${ds}/metrics?reportingCurrency=EUR`, { key: k });
      expect(before.status).to.equal(400);
      await rates(k, 'EUR', [['2024-01', 'USD', '0.9'], ['2024-02', 'USD', '0.8'], ['2024-03', 'USD', '0.8'], ['2024-04', 'USD', '0.7']]);
      const m = await metrics(k, ds, 'reportingCurrency=EUR');
      const plain = await metrics(k, ds, '');
      expect(m.monthly).to.deep.equal(plain.monthly);
      expect(m.reporting.currency).to.equal('EUR');
      expect(m.reporting.missingRates).to.deep.equal([]);
      expect(m.reporting.monthly.map((r: { month: string }) => r.month)).to.deep.equal(['2024-01', '2024-02', '2024-03', '2024-04']);
      const [jan, feb, mar, apr] = m.reporting.monthly;
      // January: Ann is one customer of 100 + 100 × 0.9.
      expect(jan).to.deep.equal({
        month: '2024-01', activeCustomers: 1, mrr: '190.00', arr: '2280.00', arpa: '190.00',
        movements: { newBusiness: { customers: 1, mrr: '190.00' }, expansion: none, contraction: none, churn: none, reactivation: none, netNewMrr: '190.00', fxImpact: '0.00' },
        rates: { customerChurn: null, grossMrrChurn: null, ...NO_RETENTION },
      });
      // February: Ann unchanged (no movement: both month ends at February's rates), her USD worth 10.00 less: fxImpact.
      expect(feb).to.deep.equal({
        month: '2024-02', activeCustomers: 2, mrr: '340.00', arr: '4080.00', arpa: '170.00',
        movements: { newBusiness: { customers: 1, mrr: '160.00' }, expansion: none, contraction: none, churn: none, reactivation: none, netNewMrr: '160.00', fxImpact: '-10.00' },
        rates: { customerChurn: '0.0000', grossMrrChurn: '0.0000', ...NO_RETENTION },
      });
      // March: Ann's USD ends: contraction of 80.00 (at March's rates), 80 ÷ 340 of last month's MRR.
      expect(mar.movements).to.deep.equal({ newBusiness: none, expansion: none, contraction: { customers: 1, mrr: '80.00' }, churn: none, reactivation: none, netNewMrr: '-80.00', fxImpact: '0.00' });
      expect(mar.rates).to.deep.equal({ customerChurn: '0.0000', grossMrrChurn: '0.2353', ...NO_RETENTION });
      // April: both churn; Bob's 200.00 USD at April's 0.7 is 140.00 (not March's 160.00): the rest is fxImpact.
      expect(apr).to.deep.equal({
        month: '2024-04', activeCustomers: 0, mrr: '0.00', arr: '0.00', arpa: null,
        movements: { newBusiness: none, expansion: none, contraction: none, churn: { customers: 2, mrr: '240.00' }, reactivation: none, netNewMrr: '-240.00', fxImpact: '-20.00' },
        rates: { customerChurn: '1.0000', grossMrrChurn: '1.0000', ...NO_RETENTION },
      });
      // In USD: each month's figures ÷ that month's USD rate; February's fxImpact is January's MRR (100 EUR + 100 USD) at February's rates minus at January's.
      const usd = await metrics(k, ds, 'reportingCurrency=USD&from=2024-01&to=2024-02');
      expect(usd.reporting.monthly.map((r: { mrr: string; movements: { fxImpact: string } }) => [r.mrr, r.movements.fxImpact])).to.deep.equal([
        ['211.11', '0.00'],
        ['425.00', '13.89'],
      ]);
      const unknown = await svc.request(`/v1/datasets/${ds}/metrics?reportingCurrency=JPY`, { key: k });
      expect([unknown.status, unknown.json.errors[0].code]).to.deep.equal([400, 'unknown_currency']);
      const malformed = await svc.request(`/v1/datasets/${ds}/metrics?reportingCurrency=usd`, { key: k });
      expect([malformed.status, malformed.json.errors[0].field]).to.deep.equal([400, 'reportingCurrency']);
      const { exchangeRatesId: _id, ...figures } = m.reporting;
      expect(figures).to.deep.equal(referenceReporting(refRows(csv), { base: 'EUR', rates: [['2024-01', 'USD', '0.9'], ['2024-02', 'USD', '0.8'], ['2024-03', 'USD', '0.8'], ['2024-04', 'USD', '0.7']] }, 'EUR'));
    });

    it('when cohorts and customers are read in a reporting currency, then each customer is one across their currencies, valued at each month\'s rates; a missing rate makes their figures null', async () => {
      const { key: k } = await svc.tenant();
      const ds = await newDataset(svc, k);
      const csv = ANN_AND_BOB;
      expect((await postCsv(svc, k, ds, csv)).status).to.equal(201);
      const noSet = await svc.request(`/v1/datasets/${ds}/cohorts?reportingCurrency=EUR`, { key: k });
      expect([noSet.status, noSet.json.errors?.[0]?.code]).to.deep.equal([400, 'no_exchange_rates']);
      // March's USD rate is missing from the first set.
      const first = await rates(k, 'EUR', [['2024-01', 'USD', '0.9'], ['2024-02', 'USD', '0.8'], ['2024-04', 'USD', '0.7']]);
      const gap = await svc.request(`/v1/datasets/${ds}/customers?month=2024-03&reportingCurrency=EUR`, { key: k });
      expect(gap.json).to.deep.include({ exchangeRatesId: first.json.id, missingRates: [{ month: '2024-03', currency: 'USD' }] });
      expect(gap.json.data.map((c: { customer: string; mrr: string | null; movement: string | null }) => [c.customer, c.mrr, c.movement])).to.deep.equal([
        ['Ann', null, null],
        ['Bob', null, null],
      ]);
      const gapCohorts = await svc.request(`/v1/datasets/${ds}/cohorts?reportingCurrency=EUR`, { key: k });
      expect(gapCohorts.json.missingRates).to.deep.equal([{ month: '2024-03', currency: 'USD' }]);
      // In March Ann holds euros only (her cohort needs no rate); Bob's dollars need March's.
      expect(gapCohorts.json.data[0].months[2]).to.deep.equal({ month: '2024-03', customers: 1, mrr: '100.00' });
      expect(gapCohorts.json.data[1].months[1]).to.deep.equal({ month: '2024-03', customers: null, mrr: null });

      const set = await rates(k, 'EUR', [['2024-01', 'USD', '0.9'], ['2024-02', 'USD', '0.8'], ['2024-03', 'USD', '0.8'], ['2024-04', 'USD', '0.7']]);
      const cohorts = await svc.request(`/v1/datasets/${ds}/cohorts?reportingCurrency=EUR`, { key: k });
      expect(cohorts.status, cohorts.text).to.equal(200);
      // Ann is one customer of the 2024-01 cohort (not one per currency); Bob's cohort is 2024-02.
      expect(cohorts.json).to.deep.equal({
        object: 'cohorts', datasetId: ds, versionId: cohorts.json.versionId, exchangeRatesId: set.json.id, missingRates: [],
        data: [
          {
            currency: 'EUR', cohort: '2024-01', customers: 1, mrr: '190.00',
            months: [
              { month: '2024-01', customers: 1, mrr: '190.00' },
              { month: '2024-02', customers: 1, mrr: '180.00' },
              { month: '2024-03', customers: 1, mrr: '100.00' },
              { month: '2024-04', customers: 0, mrr: '0.00' },
            ],
          },
          {
            currency: 'EUR', cohort: '2024-02', customers: 1, mrr: '160.00',
            months: [
              { month: '2024-02', customers: 1, mrr: '160.00' },
              { month: '2024-03', customers: 1, mrr: '160.00' },
              { month: '2024-04', customers: 0, mrr: '0.00' },
            ],
          },
        ],
      });
      // March: Ann's February (100 EUR + 100 USD) at March's rates is 180.00, her March 100.00: a contraction; Bob unchanged.
      const march = await svc.request(`/v1/datasets/${ds}/customers?month=2024-03&reportingCurrency=EUR`, { key: k });
      expect(march.json).to.deep.equal({
        object: 'list', nextCursor: null, exchangeRatesId: set.json.id, missingRates: [],
        data: [
          { object: 'customer_month', customer: 'Ann', currency: 'EUR', month: '2024-03', previousMrr: '180.00', mrr: '100.00', movement: 'contraction' },
          { object: 'customer_month', customer: 'Bob', currency: 'EUR', month: '2024-03', previousMrr: '160.00', mrr: '160.00', movement: 'retained' },
        ],
      });
      // April: both churn, Bob's 200.00 USD at April's 0.7; one page at a time.
      const april = await svc.request(`/v1/datasets/${ds}/customers?month=2024-04&reportingCurrency=EUR&movement=churn&limit=1`, { key: k });
      expect(april.json.data).to.deep.equal([{ object: 'customer_month', customer: 'Ann', currency: 'EUR', month: '2024-04', previousMrr: '100.00', mrr: '0.00', movement: 'churn' }]);
      const next = await svc.request(`/v1/datasets/${ds}/customers?month=2024-04&reportingCurrency=EUR&movement=churn&limit=1&cursor=${april.json.nextCursor}`, { key: k });
      expect(next.json.data.map((c: { customer: string; previousMrr: string }) => [c.customer, c.previousMrr])).to.deep.equal([['Bob', '140.00']]);
      expect(next.json.nextCursor).to.equal(null);

      for (const path of ['cohorts?currency=USD&reportingCurrency=EUR', 'customers?month=2024-03&currency=USD&reportingCurrency=EUR']) {
        const both = await svc.request(`/v1/datasets/${ds}/${path}`, { key: k });
        expect([both.status, both.json.errors?.[0]?.code], path).to.deep.equal([400, 'conflicting_parameters']);
      }
      const unknown = await svc.request(`/v1/datasets/${ds}/customers?month=2024-03&reportingCurrency=JPY`, { key: k });
      expect([unknown.status, unknown.json.errors?.[0]?.code]).to.deep.equal([400, 'unknown_currency']);
    });

    it('when an account uploads rates, or builds a version of several currencies once it has, then the version\'s basis for conversion is made ahead, before any reporting read', async () => {
      const { key: k } = await svc.tenant();
      const basisOf = async (versionId: string) =>
        (await svc.db.query<{ made: boolean }>('SELECT basis IS NOT NULL AS made FROM version_fx WHERE version_id = $1', [versionId])).rows[0]?.made;
      // No run of the job is due (the worker's first, or one an earlier test sent): only what the test does sends one.
      const due = async () => Number((await svc.db.query(`SELECT count(*) AS n FROM pgboss.job WHERE name = $1 AND state IN ('created', 'retry', 'active')`, [queues.backfillFigures])).rows[0].n);
      const before = await postCsv(svc, k, await newDataset(svc, k), ANN_AND_BOB);
      expect(await eventually(due, (n) => n === 0)).to.equal(0);
      await rates(k, 'EUR', [['2024-01', 'USD', '0.9']]);
      expect(await eventually(() => basisOf(before.json.id), (made) => made === true), 'made when the rates came').to.equal(true);
      expect(await eventually(due, (n) => n === 0)).to.equal(0);
      const after = await postCsv(svc, k, await newDataset(svc, k), ANN_AND_BOB);
      expect(await eventually(() => basisOf(after.json.id), (made) => made === true), 'made after the build').to.equal(true);
    });

    it('when an account converts, then its active versions\' figures are converted ahead to each currency of the set in force, and a first read answers them; a new set gets its own, a superseded version loses its', async () => {
      const { key: k } = await svc.tenant();
      const ds = await newDataset(svc, k);
      const built = await postCsv(svc, k, ds, ANN_AND_BOB);
      const set: [string, string, string][] = [['2024-01', 'USD', '0.9'], ['2024-02', 'USD', '0.8'], ['2024-03', 'USD', '0.8'], ['2024-04', 'USD', '0.7']];
      const kept = async (versionId: string) =>
        (
          await svc.db.query<{ set: string; currency: string; metrics: string; cohorts: string }>(
            'SELECT exchange_rates_id AS set, currency, metrics, cohorts FROM version_fx_answers WHERE version_id = $1 ORDER BY exchange_rates_id, currency',
            [versionId],
          )
        ).rows;
      const first = (await rates(k, 'EUR', set)).json.id as string;
      const ahead = await eventually(() => kept(built.json.id), (rows) => rows.length === 2);
      expect(ahead.map((r) => [r.set, r.currency])).to.deep.equal([[first, 'EUR'], [first, 'USD']]);
      // A new set of the same rates: converted ahead for it, and the first set's answers go.
      const second = (await rates(k, 'EUR', set)).json.id as string;
      const again = await eventually(() => kept(built.json.id), (rows) => rows.length === 2 && rows.every((r) => r.set === second));
      expect(again.map((r) => r.currency)).to.deep.equal(['EUR', 'USD']);
      // Converted ahead as a read converts: with the EUR answer gone, the read converts it, to the same figures.
      await svc.db.query('DELETE FROM version_fx_answers WHERE version_id = $1 AND currency = $2', [built.json.id, 'EUR']);
      const converted = await metrics(k, ds, 'reportingCurrency=EUR');
      expect(converted.reporting.monthly).to.deep.equal(JSON.parse(again[0]!.metrics).monthly);
      expect((await svc.request(`/v1/datasets/${ds}/cohorts?reportingCurrency=EUR`, { key: k })).json.data).to.deep.equal(JSON.parse(again[0]!.cohorts).data);
      // A read of USD answers what was kept (here marked, to be told apart).
      const marked = JSON.parse(again[1]!.metrics);
      marked.monthly[0].mrr = '123456.78';
      await svc.db.query('UPDATE version_fx_answers SET metrics = $2 WHERE version_id = $1 AND currency = $3', [built.json.id, JSON.stringify(marked), 'USD']);
      expect((await metrics(k, ds, 'reportingCurrency=USD')).reporting.monthly[0].mrr).to.equal('123456.78');
      // A new version: its figures converted ahead, the superseded one's let go.
      const next = await postCsv(svc, k, ds, ANN_AND_BOB.replace('300.00,EUR', '600.00,EUR'));
      expect(next.status, next.text).to.equal(201);
      expect((await eventually(() => kept(next.json.id), (rows) => rows.length === 2)).map((r) => r.set)).to.deep.equal([second, second]);
      expect(await eventually(() => kept(built.json.id), (rows) => rows.length === 0)).to.deep.equal([]);
    });

    it('when a version is built, then the cells it keeps for its basis are each at its fixed point already (over FIXED, unwritten), and its reporting figures are the reference\'s', async () => {
      const { key: k } = await svc.tenant();
      const ds = await newDataset(svc, k);
      const csv = ODD_TERMS_CSV;
      const built = await postCsv(svc, k, ds, csv);
      expect(built.status, built.text).to.equal(201);
      const { rows } = await svc.db.query<{ cells: string | null; cells_zstd: Buffer | null }>('SELECT cells, cells_zstd FROM version_fx WHERE version_id = $1', [built.json.id]);
      expect(rows[0]!.cells, 'kept compressed (sql/031)').to.equal(null);
      const cells = (await storedText(rows[0]!.cells, rows[0]!.cells_zstd))!;
      expect(cells).to.include('"n":').and.not.include('"d":');
      const denominators = new Set(JSON.stringify(parseCells(cells), (_, v: unknown) => (typeof v === 'bigint' ? String(v) : v)).match(/"d":"\d+"/g));
      expect([...denominators]).to.deep.equal([`"d":"${FIXED}"`]);
      const set: [string, string, string][] = [['2024-01', 'USD', '0.9'], ['2024-02', 'USD', '0.85'], ['2024-03', 'USD', '0.8'], ['2024-04', 'USD', '0.8']];
      await rates(k, 'EUR', set);
      const m = await metrics(k, ds, 'reportingCurrency=EUR');
      const { exchangeRatesId: _id, ...figures } = m.reporting;
      expect(figures).to.deep.equal(referenceReporting(refRows(csv), { base: 'EUR', rates: set }, 'EUR'));
    });

    it('when a version\'s cohorts and cells were kept as text (built before sql/031), then its cohorts read the same, and its basis is made from them the same', async () => {
      const { key: k } = await svc.tenant();
      const ds = await newDataset(svc, k);
      const csv = ODD_TERMS_CSV;
      const built = await postCsv(svc, k, ds, csv);
      expect(built.status, built.text).to.equal(201);
      await rates(k, 'EUR', [['2024-01', 'USD', '0.9'], ['2024-02', 'USD', '0.85'], ['2024-03', 'USD', '0.8']]);
      const read = async () => ({
        cohorts: (await svc.request(`/v1/datasets/${ds}/cohorts`, { key: k })).json.data,
        reporting: (await metrics(k, ds, 'reportingCurrency=EUR')).reporting,
      });
      const compressed = await read();
      expect(compressed.cohorts).to.have.length(2);
      const id = built.json.id;
      const cohorts = await svc.db.query<{ currency: string; cohorts_zstd: Buffer }>('SELECT currency, cohorts_zstd FROM version_cohorts WHERE version_id = $1', [id]);
      for (const row of cohorts.rows) {
        await svc.db.query('UPDATE version_cohorts SET cohorts = $3, cohorts_zstd = NULL WHERE version_id = $1 AND currency = $2', [id, row.currency, await storedText(null, row.cohorts_zstd)]);
      }
      const fx = await svc.db.query<{ cells_zstd: Buffer }>('SELECT cells_zstd FROM version_fx WHERE version_id = $1', [id]);
      await svc.db.query('UPDATE version_fx SET cells = $2, cells_zstd = NULL, basis = NULL, basis_json = NULL WHERE version_id = $1', [id, await storedText(null, fx.rows[0]!.cells_zstd)]);
      await svc.db.query('DELETE FROM version_fx_answers WHERE version_id = $1', [id]);
      expect(await read()).to.deep.equal(compressed);
      // Made again, from the text (the basis thread stores it as it answers).
      const made = async () => (await svc.db.query('SELECT 1 FROM version_fx WHERE version_id = $1 AND basis IS NOT NULL AND cells IS NOT NULL', [id])).rows.length;
      expect(await eventually(made, (n) => n === 1)).to.equal(1);
    });

    it('when a version\'s basis is made at its first reporting read, then it is made on a thread of its own, with a connection of its own, once however many reads ask at once', async () => {
      const { key: k } = await svc.tenant();
      const ds = await newDataset(svc, k);
      const built = await postCsv(svc, k, ds, ANN_AND_BOB);
      await rates(k, 'EUR', [['2024-01', 'USD', '0.9'], ['2024-02', 'USD', '0.8']]);
      // Made ahead by the job once the rates came, with the figures converted: made again at the reads below.
      const made = async () => (await svc.db.query('SELECT 1 FROM version_fx WHERE version_id = $1 AND basis IS NOT NULL', [built.json.id])).rows.length;
      const converted = async () => (await svc.db.query('SELECT 1 FROM version_fx_answers WHERE version_id = $1', [built.json.id])).rows.length;
      await eventually(made, (n) => n === 1);
      await eventually(converted, (n) => n === 2);
      await svc.db.query('UPDATE version_fx SET basis = NULL WHERE version_id = $1', [built.json.id]);
      await svc.db.query('DELETE FROM version_fx_answers WHERE version_id = $1', [built.json.id]);
      // The basis is stored with the row locked here: whoever makes it waits on this lock, and can be seen.
      const holder = await svc.db.connect();
      try {
        await holder.query('BEGIN');
        await holder.query('SELECT 1 FROM version_fx WHERE version_id = $1 FOR UPDATE', [built.json.id]);
        const reads = Promise.all(Array.from({ length: 4 }, () => svc.request(`/v1/datasets/${ds}/metrics?reportingCurrency=EUR`, { key: k })));
        const waiting = async () =>
          (await svc.db.query<{ name: string }>(`SELECT application_name AS name FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`)).rows.map((r) => r.name);
        expect(new Set(await eventually(waiting, (names) => names.length > 0))).to.deep.equal(new Set(['dataset-service-fx-basis']));
        await holder.query('ROLLBACK');
        const replies = await reads;
        for (const reply of replies) expect(reply.status, reply.text).to.equal(200);
        expect(new Set(replies.map((r) => JSON.stringify(r.json.reporting))).size).to.equal(1);
      } finally {
        await holder.query('ROLLBACK').catch(() => {});
        holder.release();
      }
      expect(await made()).to.equal(1);
    });

    it('when a version has no contributing rows, then its reporting series is empty, not an error', async () => {
      const { key: k } = await svc.tenant();
      const ds = await newDataset(svc, k);
      expect((await postCsv(svc, k, ds, `${HEADER}\nz1,Zed,Pro,2024-01-01,2024-03-31,0.00,EUR\n`)).status).to.equal(201);
      expect((await rates(k, 'EUR', [['2024-01', 'USD', '0.9']])).status).to.equal(201);
      const m = await metrics(k, ds, 'reportingCurrency=EUR');
      expect(m.reporting).to.include({ currency: 'EUR' });
      expect(m.reporting.monthly).to.deep.equal([]);
    });

    it('when a version\'s basis was kept as JSON by an earlier release and its customers are purged since, then its reporting figures are the same, and the basis is packed once', async () => {
      const { key: k } = await svc.tenant();
      const ds = await newDataset(svc, k);
      const built = await postCsv(svc, k, ds, ANN_AND_BOB);
      const set: [string, string, string][] = [['2024-01', 'USD', '0.9'], ['2024-02', 'USD', '0.8'], ['2024-03', 'USD', '0.8'], ['2024-04', 'USD', '0.7']];
      expect((await rates(k, 'EUR', set)).status).to.equal(201);
      const before = await metrics(k, ds, 'reportingCurrency=EUR');
      // As migration 026 left a basis of the JSON layout: the packed one gone, and what could make it again (the cells, the customers) purged.
      const legacy = legacyBasisJson(await readFxBasis(svc.db, built.json.id));
      await svc.db.query('UPDATE version_fx SET basis = NULL, cells = NULL, cells_zstd = NULL, basis_json = $2 WHERE version_id = $1', [built.json.id, legacy]);
      await svc.db.query('DELETE FROM version_customers WHERE version_id = $1', [built.json.id]);
      // A new set of the same rates: the answers kept for the first are not this one's.
      expect((await rates(k, 'EUR', set)).status).to.equal(201);
      const after = await metrics(k, ds, 'reportingCurrency=EUR');
      expect(after.reporting.exchangeRatesId).to.not.equal(before.reporting.exchangeRatesId);
      expect(after.reporting.monthly).to.deep.equal(before.reporting.monthly);
      const { rows } = await svc.db.query<{ packed: boolean; json: boolean }>('SELECT basis IS NOT NULL AS packed, basis_json IS NOT NULL AS json FROM version_fx WHERE version_id = $1', [built.json.id]);
      expect(rows[0]).to.deep.equal({ packed: true, json: false });
    });

    it('when a superseded version\'s rows are purged before any reporting read, then its reporting series is still the customer-as-unit one (its customers of several currencies are read before they go)', async () => {
      const { key: k } = await svc.tenant();
      const ds = await newDataset(svc, k);
      const csv = ANN_AND_BOB;
      const old = await postCsv(svc, k, ds, csv);
      expect((await postCsv(svc, k, ds, `${HEADER}\nc1,Cy,Pro,2024-01-01,2024-12-31,1200.00,EUR\n`)).status).to.equal(201);
      const set: [string, string, string][] = [['2024-01', 'USD', '0.9'], ['2024-02', 'USD', '0.8'], ['2024-03', 'USD', '0.8'], ['2024-04', 'USD', '0.7']];
      await rates(k, 'EUR', set);
      await svc.db.query(`UPDATE versions SET superseded_at = now() - interval '31 days' WHERE id = $1`, [old.json.id]);
      expect((await purgeVersionsPastRetention(svc.db, svc.blobs, 30)).versions).to.be.at.least(1);
      const m = await metrics(k, ds, `versionId=${old.json.id}&reportingCurrency=EUR`);
      expect(m.reporting.monthly[0]).to.include({ month: '2024-01', activeCustomers: 1, mrr: '190.00' });
      const { exchangeRatesId: _id, ...figures } = m.reporting;
      expect(figures).to.deep.equal(referenceReporting(refRows(csv), { base: 'EUR', rates: set }, 'EUR'));
      const cohorts = await svc.request(`/v1/datasets/${ds}/cohorts?versionId=${old.json.id}&reportingCurrency=EUR`, { key: k });
      expect({ data: cohorts.json.data, missingRates: cohorts.json.missingRates }).to.deep.equal(referenceReportingCohorts(refRows(csv), { base: 'EUR', rates: set }, 'EUR'));
    });

    it('when a rate changes with no business change, then fxImpact alone moves; a month missing a rate is null in every figure and listed once', async () => {
      const { key: k } = await svc.tenant();
      const ds = await newDataset(svc, k);
      // Cy: 100.00 USD a month through 2024; churn shows in 2025-01.
      const csv = [HEADER, 'c1,Cy,Pro,2024-01-01,2024-12-31,1200.00,USD'].join('\n');
      expect((await postCsv(svc, k, ds, csv)).status).to.equal(201);
      const months = ['01', '02', '04', '05', '06', '07', '08', '09', '10', '11', '12'].map((mm) => `2024-${mm}`);
      const set = await rates(k, 'EUR', months.map((month, i) => [month, 'USD', i === 0 ? '0.9' : '0.95']));
      const m = await metrics(k, ds, 'reportingCurrency=EUR');
      const byMonth = Object.fromEntries(m.reporting.monthly.map((r: { month: string }) => [r.month, r]));
      expect(byMonth['2024-02']).to.deep.equal({
        month: '2024-02', activeCustomers: 1, mrr: '95.00', arr: '1140.00', arpa: '95.00',
        movements: { newBusiness: none, expansion: none, contraction: none, churn: none, reactivation: none, netNewMrr: '0.00', fxImpact: '5.00' },
        rates: { customerChurn: '0.0000', grossMrrChurn: '0.0000', ...NO_RETENTION },
      });
      const nothing = { customers: null, mrr: null };
      const nullMonth = (month: string) => ({
        month, activeCustomers: null, mrr: null, arr: null, arpa: null,
        movements: { newBusiness: nothing, expansion: nothing, contraction: nothing, churn: nothing, reactivation: nothing, netNewMrr: null, fxImpact: null },
        rates: { customerChurn: null, grossMrrChurn: null, netRevenueRetention: null, grossRevenueRetention: null },
      });
      // March has no USD rate: March is null, and April too (it values March's MRR at March's rates for fxImpact).
      expect(byMonth['2024-03']).to.deep.equal(nullMonth('2024-03'));
      expect(byMonth['2024-04']).to.deep.equal(nullMonth('2024-04'));
      expect(byMonth['2024-05'].mrr).to.equal('95.00');
      expect(byMonth['2025-01']).to.deep.equal(nullMonth('2025-01'));
      expect(m.reporting.missingRates).to.deep.equal([{ month: '2024-03', currency: 'USD' }, { month: '2025-01', currency: 'USD' }]);
      expect(m.reporting.exchangeRatesId).to.equal(set.json.id);
      // A slice lists the rates its own months lack.
      const sliced = await metrics(k, ds, 'reportingCurrency=EUR&from=2024-04&to=2024-06');
      expect(sliced.reporting.monthly).to.deep.equal([byMonth['2024-04'], byMonth['2024-05'], byMonth['2024-06']]);
      expect(sliced.reporting.missingRates).to.deep.equal([{ month: '2024-03', currency: 'USD' }]);
    });
    it('when a converted figure is exactly half a cent past a cent (729 days of a term against a rate of 0.729), then it is rounded half away from zero, as its exact value is', async () => {
      const { key: k } = await svc.tenant();
      const ds = await newDataset(svc, k);
      // 6,000.00 USD over 729 days (not whole months): 600,000 × 487 ÷ (16 × 729) cents a month, 250.5144… USD,
      // which at 0.729 is exactly 182.625 EUR. The basis holds the USD sum rounded to 1/FIXED of a cent (729 does not divide FIXED).
      const csv = [HEADER, 'c1,Dee,Pro,2024-01-01,2025-12-29,6000.00,USD'].join('\n');
      expect((await postCsv(svc, k, ds, csv)).status).to.equal(201);
      await rates(k, 'EUR', [['2024-01', 'USD', '0.729']]);
      const m = await metrics(k, ds, 'reportingCurrency=EUR&from=2024-01&to=2024-01');
      const [jan] = m.reporting.monthly;
      expect([jan.mrr, jan.arr, jan.arpa, jan.movements.newBusiness.mrr]).to.deep.equal(['182.63', '2191.50', '182.63', '182.63']);
      const cohorts = await svc.request(`/v1/datasets/${ds}/cohorts?reportingCurrency=EUR`, { key: k });
      expect(cohorts.json.data[0].months[0]).to.deep.equal({ month: '2024-01', customers: 1, mrr: '182.63' });
    });
  });

  describe('against the reference', () => {
    const CURRENCIES = ['EUR', 'USD', 'GBP', 'JPY'];
    const rate = fc.oneof(
      fc.integer({ min: 1, max: 99_999 }).map((n) => `0.${String(n).padStart(5, '0')}`),
      fc.bigInt({ min: 1n, max: 10n ** 12n }).map((n) => {
        const s = n.toString().padStart(11, '0');
        return `${s.slice(0, -10)}.${s.slice(-10)}`;
      }),
      fc.constantFrom('1', '2', '0.5', '1.25'),
    );
    /** Rates for 2021-12 to 2031-12 of the book's currencies, now and then one missing. */
    const rateSets = fc.record({
      base: fc.constantFrom('EUR', 'USD', 'CHF'),
      reporting: fc.constantFrom('EUR', 'USD', 'GBP', 'JPY', 'CHF'),
      changes: fc.array(rate, { minLength: 1, maxLength: 6 }),
      missing: fc.array(fc.tuple(fc.integer({ min: 0, max: 121 }), fc.constantFrom(...CURRENCIES)), { maxLength: 3 }),
      seed: fc.integer({ min: 0, max: 1000 }),
    }).map(({ base, reporting, changes, missing, seed }): { set: ReferenceRates; reporting: string } => {
      const list: [string, string, string][] = [];
      for (let i = 0; i <= 121; i++) {
        const k = 2021 * 12 + 11 + i;
        const month = `${Math.floor(k / 12)}-${String((k % 12) + 1).padStart(2, '0')}`;
        CURRENCIES.forEach((c, j) => {
          if (c === base || missing.some(([mi, mc]) => mi === i && mc === c)) return;
          list.push([month, c, changes[(i * 7 + j * 3 + seed) % changes.length]!]);
        });
      }
      return { set: { base, rates: list }, reporting: reporting === 'CHF' ? base : reporting };
    });

    it('when books and sets of rates are generated, then the conversion of the customers\' stored changes equals the reference (without a service)', () => {
      fc.assert(
        fc.property(books(8), rateSets, (rows, { set, reporting }) => {
          const { cohorts, ...mine } = convertInProcess(rows, set, reporting);
          expect(cohorts).to.deep.equal(referenceReportingCohorts(rows, set, reporting));
          const ref = referenceReporting(rows, set, reporting);
          const at = mine.monthly.findIndex((x, i) => JSON.stringify(x) !== JSON.stringify(ref.monthly[i]));
          expect(mine.monthly[at], `month ${at}`).to.deep.equal(ref.monthly[at]);
          expect(mine).to.deep.equal(ref);
        }),
        { numRuns: 100 },
      );
    });

    it('when books of several currencies and sets of rates (some missing) are generated, then the reporting series equals the reference', async () => {
      const { key: k } = await svc.tenant();
      await fc.assert(
        fc.asyncProperty(books(6), rateSets, async (rows, { set, reporting }) => {
          const ds = await newDataset(svc, k);
          const built = await postCsv(svc, k, ds, bookCsv(rows));
          expect(built.status, built.text).to.equal(201);
          const made = await rates(k, set.base, set.rates);
          expect(made.status, made.text).to.equal(201);
          const m = await metrics(k, ds, `reportingCurrency=${reporting}`);
          const ref = referenceReporting(rows, set, reporting);
          const at = m.reporting.monthly.findIndex((x: unknown, i: number) => JSON.stringify(x) !== JSON.stringify(ref.monthly[i]));
          expect(m.reporting.monthly[at], `month ${at}`).to.deep.equal(ref.monthly[at]);
          const { exchangeRatesId: _id, ...figures } = m.reporting;
          expect(figures).to.deep.equal(ref);

          const cohorts = await svc.request(`/v1/datasets/${ds}/cohorts?reportingCurrency=${reporting}`, { key: k });
          expect(cohorts.status, cohorts.text).to.equal(200);
          expect(cohorts.json.exchangeRatesId).to.equal(made.json.id);
          const refCohorts = referenceReportingCohorts(rows, set, reporting);
          expect({ data: cohorts.json.data, missingRates: cohorts.json.missingRates }).to.deep.equal(refCohorts);

          // The customers of the series' first month, one inside it and its last, page by page (two at a time).
          const months = ref.monthly.map((x) => (x as { month: string }).month);
          for (const month of [...new Set([months[0], months[Math.floor(months.length / 2)], months.at(-1)])].filter((x) => x !== undefined)) {
            const got = await allCustomers(k, ds, `month=${month}&reportingCurrency=${reporting}&limit=2`);
            expect(got, month).to.deep.equal(referenceReportingCustomers(rows, set, reporting, month));
          }
        }),
        { numRuns: 40 },
      );
    });
  });
});

/** The book's changes as a build stores them (packed, exact), made a basis and converted: the service's way, in this process. */
function convertInProcess(rows: ReferenceRow[], set: ReferenceRates, reporting: string) {
  const day = (s: string) => Date.UTC(Number(s.slice(0, 4)), Number(s.slice(5, 7)) - 1, Number(s.slice(8, 10))) / 86_400_000;
  const cents = (amount: string) => BigInt(amount.replace('.', '')) * (amount.includes('.') ? 10n ** BigInt(2 - amount.split('.')[1]!.length) : 100n);
  const book = new MetricsBook();
  const customers = new Map<string, Record<string, ExactStep[]>>();
  const groups = new Map<string, ReferenceRow[]>();
  for (const r of rows) groups.set(`${r.currency}\u0000${r.customer}`, [...(groups.get(`${r.currency}\u0000${r.customer}`) ?? []), r]);
  for (const [k, list] of groups) {
    const [currency, customer] = k.split('\u0000') as [string, string];
    const terms = list.map((r) => contractTerm(day(r.startDate!), day(r.endDate!), cents(r.amount!)));
    const changes = book.walk(currency, terms, terms.length);
    if (changes.length === 0) continue;
    const stored = unpackChanges(changes.month[0]!, packChanges(changes));
    const mine = customers.get(customer) ?? {};
    mine[currency] = stored.map((c) => ({ month: c.month, movement: c.movement, n: c.mrr, den: c.den }));
    customers.set(customer, mine);
  }
  // As a version built before there was a basis keeps it (every customer's changes), and as a build does (its book's cells, less the customers of several currencies).
  const builder = new FxBasisBuilder(book.bounds());
  for (const steps of customers.values()) builder.addCustomer(steps);
  const built = new FxBasisBuilder(book.bounds(), book.exactCells());
  for (const steps of customers.values()) built.addCustomer(steps);
  const table = new Map<string, Map<number, bigint>>();
  for (const [month, currency, rate] of set.rates) {
    const [whole, frac = ''] = rate.split('.');
    if (!table.has(currency)) table.set(currency, new Map());
    table.get(currency)!.set(Number(month.slice(0, 4)) * 12 + Number(month.slice(5, 7)) - 1, BigInt(whole!) * RATE_SCALE + BigInt(frac.padEnd(10, '0')));
  }
  const [everyone, fromCells] = [builder.done(), built.done()];
  const rateTable = { base: set.base, rates: table };
  const out = convert(everyone, rateTable, reporting);
  expect(convert(fromCells, rateTable, reporting)).to.deep.equal(out);
  // As it is kept (packed) and read back, and as an earlier release kept it (JSON): the same basis, converted the same.
  for (const kept of [unpackBasis(packBasis(fromCells)), parseBasisJson(JSON.parse(legacyBasisJson(fromCells)) as BasisDoc)]) {
    expect(contentsOf(kept)).to.deep.equal(contentsOf(fromCells));
    expect(convert(kept, rateTable, reporting)).to.deep.equal(out);
  }
  const cohorts = convertCohorts(everyone, rateTable, reporting);
  expect(convertCohorts(fromCells, rateTable, reporting)).to.deep.equal(cohorts);
  return { currency: out.currency, monthly: out.monthly, missingRates: missingRates(out.missing), cohorts: { data: cohorts.data, missingRates: cohorts.missing } };
}

/** A basis as plain data (its retention records as the builder made them, not their columns). */
const contentsOf = (b: FxBasis) => {
  const retention = b.several.mixedRetention;
  return { ...b, several: { ...b.several, mixedRetention: Array.from({ length: retention.count }, (_, r) => retention.record(r)) } };
};

/** A basis as releases before BASIS_FORMAT 4 kept it (JSON of format 3, BigInts as decimal strings): what migration 026 leaves in basis_json. */
function legacyBasisJson(b: FxBasis): string {
  const vector = (v: Record<string, bigint>) => Object.fromEntries(Object.entries(v).map(([c, x]) => [c, `${x}`]));
  const { several } = contentsOf(b);
  return JSON.stringify({
    format: BASIS_JSON_FORMAT,
    denominator: `${b.denominator}`,
    currencies: b.currencies.map((c) => ({
      currency: c.currency,
      first: c.first,
      last: c.last,
      months: c.months.map((m) => [m.active, `${m.mrr}`, `${m.now}`, `${m.then}`, `${m.min}`, ...MOVEMENTS.flatMap((name) => [m.moves[name].customers, `${m.moves[name].mrr}`]), m.holders]),
    })),
    several: {
      first: several.first,
      active: several.active,
      moves: several.moves,
      mixedChanges: several.mixedChanges.map((x) => [x.month, vector(x.delta), `${x.den}`]),
      mixedRetention: several.mixedRetention.map((x) => [x.month, vector(x.now), vector(x.then), `${x.den}`, x.until]),
    },
    cohorts: b.cohorts.map((c) => [c.cohort, c.active, Object.fromEntries(Object.entries(c.mrr).map(([currency, v]) => [currency, v.map(String)])), c.holders]),
  });
}

/** Hand-written rows as the reference takes them. */
function refRows(csv: string) {
  return csv
    .split('\n')
    .slice(1)
    .map((line) => {
      const [, customer, , startDate, endDate, amount, currency] = line.split(',');
      return { customer: customer!, startDate, endDate, amount, currency };
    });
}
