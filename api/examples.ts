// Example objects for the reference (OpenAPI `example`s): one coherent story, a CRM dataset with
// its versions, an export, its metrics and catalog, so that a reader sees the same ids throughout.
import { GATING_FIELDS } from '../shared/contract/fields.ts';

export const ids = {
  dataset: 'ds_3k9x0v4m7q2r8t1w5y6z',
  version: 'ver_9a8b7c6d5e4f3a2b1c0d',
  older: 'ver_1q2w3e4r5t6y7u8i9o0p',
  upload: 'upl_9x2kq7m4p1s8v3d6f0hw',
  export: 'exp_7h6g5f4d3s2a1q0w9e8r',
} as const;

export const datasetExample = {
  id: ids.dataset,
  object: 'dataset',
  externalRef: 'crm-2026',
  name: 'CRM contracts',
  mode: 'live',
  activeVersionId: ids.version,
  createdAt: '2026-11-02T08:00:00.000Z',
};

export const versionExample = {
  id: ids.version,
  object: 'version',
  datasetId: ids.dataset,
  status: 'active',
  rowCount: 120000,
  contributingRowCount: 118250,
  progress: { rowsProcessed: 120000, bytesProcessed: 9612345, bytesTotal: 9612345 },
  problem: null,
  createdAt: '2026-11-23T09:13:58.104Z',
  completedAt: '2026-11-23T09:14:03.511Z',
  rowsPurgedAt: null,
  replacedVersionId: ids.older,
  columns: { recognized: ['contractId', 'customer', 'product', 'startDate', 'endDate', 'amount', 'currency'], ignored: ['region'], missing: [] },
  warnings: [],
};

export const buildingVersionExample = {
  ...versionExample,
  status: 'building',
  rowCount: null,
  contributingRowCount: null,
  progress: { rowsProcessed: 48000, bytesProcessed: 3845000, bytesTotal: 9612345 },
  completedAt: null,
  replacedVersionId: null,
};

export const exportExample = {
  id: ids.export,
  object: 'export',
  datasetId: ids.dataset,
  versionId: ids.version,
  format: 'csv',
  status: 'ready',
  rowCount: 120000,
  bytes: 9410211,
  failure: null,
  createdAt: '2026-11-23T09:20:00.000Z',
  completedAt: '2026-11-23T09:20:04.210Z',
  expiresAt: '2026-11-30T09:20:04.210Z',
  downloadUrl: `https://api.example.com/exports/${ids.export}/download?expires=1795430404&signature=Hq3…`,
};

export const metricsExample = {
  object: 'metrics',
  datasetId: ids.dataset,
  versionId: ids.version,
  rows: { total: 120000, contributing: 118250, excluded: Object.fromEntries(GATING_FIELDS.map((f, i) => [f.name, [1200, 300, 250, 0][i % 4]])) },
  currencies: [
    { currency: 'EUR', contracts: 90000, customers: 21000, totalValue: '108000000.00' },
    { currency: 'USD', contracts: 28250, customers: 6400, totalValue: '33900000.00' },
  ],
  monthly: [
    {
      month: '2026-01',
      currency: 'EUR',
      activeContracts: 61000,
      activeCustomers: 15200,
      mrr: '6100000.00',
      arr: '73200000.00',
      arpa: '401.32',
      movements: {
        newBusiness: { customers: 1200, mrr: '420000.00' },
        expansion: { customers: 800, mrr: '96000.00' },
        contraction: { customers: 240, mrr: '31000.00' },
        churn: { customers: 310, mrr: '118000.00' },
        reactivation: { customers: 40, mrr: '12000.00' },
        netNewMrr: '379000.00',
      },
      rates: { customerChurn: '0.0216', grossMrrChurn: '0.0258', netRevenueRetention: '1.0412', grossRevenueRetention: '0.9134' },
    },
  ],
};

export const cohortsExample = {
  object: 'cohorts',
  datasetId: ids.dataset,
  versionId: ids.version,
  data: [
    {
      currency: 'EUR',
      cohort: '2025-11',
      customers: 120,
      mrr: '48000.00',
      months: [
        { month: '2025-11', customers: 120, mrr: '48000.00' },
        { month: '2025-12', customers: 117, mrr: '47100.00' },
        { month: '2026-01', customers: 115, mrr: '49350.00' },
      ],
    },
  ],
};

export const customerMonthExample = {
  object: 'customer_month',
  customer: 'Acme GmbH',
  currency: 'EUR',
  month: '2026-03',
  previousMrr: '500.00',
  mrr: '0.00',
  movement: 'churn',
};

const fxSet = 'fx_01JD8X4Q2M7N5P3R9S1T6V0W2Y';
const inEur = (month: string, mrr: string) => ({ month, customers: 118, mrr });

/** The metrics with ?reportingCurrency=EUR: the same, and the whole business in euros. */
export const metricsReportingExample = {
  ...metricsExample,
  reporting: {
    currency: 'EUR',
    exchangeRatesId: fxSet,
    monthly: [
      {
        month: '2026-01',
        activeCustomers: 21350,
        mrr: '8012450.00',
        arr: '96149400.00',
        arpa: '375.29',
        movements: {
          newBusiness: { customers: 1610, mrr: '548300.00' },
          expansion: { customers: 1090, mrr: '131200.00' },
          contraction: { customers: 330, mrr: '42400.00' },
          churn: { customers: 425, mrr: '161900.00' },
          reactivation: { customers: 52, mrr: '15500.00' },
          netNewMrr: '490700.00',
          fxImpact: '-18350.00',
        },
        rates: { customerChurn: '0.0211', grossMrrChurn: '0.0262', netRevenueRetention: '1.0390', grossRevenueRetention: '0.9120' },
      },
    ],
    missingRates: [],
  },
};

/** The cohorts with ?reportingCurrency=EUR: each customer once, in the cohort of their first month end with MRR. */
export const cohortsReportingExample = {
  object: 'cohorts',
  datasetId: ids.dataset,
  versionId: ids.version,
  exchangeRatesId: fxSet,
  missingRates: [{ month: '2026-02', currency: 'USD' }],
  data: [
    {
      currency: 'EUR',
      cohort: '2025-11',
      customers: 158,
      mrr: '61830.00',
      months: [inEur('2025-11', '61830.00'), { ...inEur('2025-12', '60910.00'), customers: 154 }, { ...inEur('2026-01', '63120.00'), customers: 151 }, { month: '2026-02', customers: null, mrr: null }],
    },
  ],
};

/** A page of customers with ?reportingCurrency=EUR: both month ends at the month's rates. */
export const customerMonthsReportingExample = {
  object: 'list',
  data: [{ object: 'customer_month', customer: 'Acme GmbH', currency: 'EUR', month: '2026-03', previousMrr: '962.40', mrr: '0.00', movement: 'churn' }],
  nextCursor: null,
  exchangeRatesId: fxSet,
  missingRates: [],
};

export const catalogExample = {
  object: 'catalog',
  datasetId: ids.dataset,
  versionId: ids.version,
  rowCount: 120000,
  fields: [
    { name: 'contractId', type: 'string', gating: false, present: 120000, distinct: 120000, min: 'C000001', max: 'C120000' },
    { name: 'startDate', type: 'date', gating: true, present: 118800, distinct: 730, min: '2025-01-01', max: '2026-12-31' },
    { name: 'amount', type: 'decimal', gating: true, present: 119750, distinct: 9850, min: '10.00', max: '250000.00' },
  ],
  products: [{ product: 'Pro', contracts: 64000, customers: 15100 }],
};

export const versionChangesExample = {
  object: 'version_changes',
  datasetId: ids.dataset,
  versionId: ids.version,
  sinceVersionId: ids.older,
  contracts: { added: 412, removed: 38, changed: 95, unchanged: 119455 },
  months: [
    {
      month: '2026-09',
      currency: 'EUR',
      before: { mrr: '6384000.00', activeCustomers: 15890 },
      after: { mrr: '6381500.00', activeCustomers: 15889 },
      mrrChange: '-2500.00',
    },
  ],
};

export const contractChangeExample = {
  object: 'contract_change',
  change: 'changed',
  contractId: 'C-1001',
  before: { contractId: 'C-1001', customer: 'Acme GmbH', product: 'Pro', startDate: '2026-01-01', endDate: '2026-12-31', amount: '1200.00', currency: 'EUR' },
  after: { contractId: 'C-1001', customer: 'Acme GmbH', product: 'Pro', startDate: '2026-01-01', endDate: '2026-12-31', amount: '1500.00', currency: 'EUR' },
  fields: ['amount'],
};

export const contractChangesCsvExample =
  'change,fields,contractId,customer,product,startDate,endDate,amount,currency\r\n' +
  'changed,amount,C-1001,Acme GmbH,Pro,2026-01-01,2026-12-31,1500.00,EUR\r\n' +
  'removed,contractId;customer;product;startDate;endDate;amount;currency,C-1002,Beta Ltd,Support,2026-02-01,2027-01-31,600.00,EUR\r\n';

export const list = <T>(item: T) => ({ object: 'list', data: [item], nextCursor: null });

/** A small contract file, as a text/csv body. */
export const csvExample = 'contractId,customer,product,startDate,endDate,amount,currency\nC-1001,Acme GmbH,Pro,2026-01-01,2026-12-31,1200.00,EUR\n';

/** The same rows as JSON lines (an export in jsonl). */
export const jsonlExample = '{"contractId":"C-1001","customer":"Acme GmbH","product":"Pro","startDate":"2026-01-01","endDate":"2026-12-31","amount":"1200.00","currency":"EUR"}\n';

/** A 422 ingest-validation-failed document, as a version object carries it. */
export const validationProblemExample = {
  type: 'https://api.example.com/problems/ingest-validation-failed',
  title: 'Unprocessable Entity',
  status: 422,
  detail: '2 rows were rejected (2 problems); nothing was written.',
  instance: `/v1/datasets/${ids.dataset}/versions`,
  errors: [
    { row: 3, field: 'startDate', code: 'not_a_date', message: 'startDate "2026-02-30" is not a date YYYY-MM-DD.' },
    { row: 7, field: 'customer', code: 'required', message: 'customer is required.' },
  ],
  errorCount: 2,
  errorsUrl: `https://api.example.com/v1/datasets/${ids.dataset}/versions/${ids.version}/errors`,
  versionId: ids.version,
};

/** The host the examples are written for; the reference and the problem pages show them at the server's own addresses. */
const EXAMPLE_ORIGIN = 'https://api.example.com';

/** An example (any JSON value) with its host made this server's: problem types under ERRORS_BASE, other addresses under BASE_URL. */
export function atThisServer<T>(value: T, baseUrl: string, errorsBase: string): T {
  if (typeof value === 'string') return value.replaceAll(`${EXAMPLE_ORIGIN}/problems`, errorsBase).replaceAll(EXAMPLE_ORIGIN, baseUrl) as T;
  if (Array.isArray(value)) return value.map((v) => atThisServer(v, baseUrl, errorsBase)) as T;
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, atThisServer(v, baseUrl, errorsBase)])) as T;
  return value;
}
