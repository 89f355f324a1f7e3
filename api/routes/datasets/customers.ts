// GET /v1/datasets/{id}/customers?month=YYYY-MM: every customer with MRR at the end of that month
// or of the month before, with both and the movement between them (../shared/spec/contract.md,
// "Metrics and catalog"): "which customers churned in March". Read from each customer's changes,
// stored when the version was built.
import { z } from 'zod';
import { type CustomerCursor, readCustomerMonths } from '../../../shared/domain/monthlyFigures.ts';
import { CUSTOMER_MOVEMENTS, FIGURE_WORDS } from '../../../shared/figures/definitions.ts';
import { defineOperation } from '../../defineOperation.ts';
import { customerMonthExample, customerMonthsReportingExample, list } from '../../examples.ts';
import { tenantOf } from '../../principal.ts';
import { invalidCursor, listOf } from '../../schemas.ts';
import { readReportingCustomerMonths } from '../../../shared/domain/reportingCurrency.ts';
import { Currency, oneCurrency, ReportingCurrencyQuery } from './cohorts.ts';
import { Month } from './metricsAndCatalog.ts';
import { readableVersion, rowsPurged, VersionIdQuery } from './readableVersion.ts';
import { DatasetIdParams } from './schemas.ts';

/** PostgreSQL's undefined_table. */
const UNDEFINED_TABLE = '42P01';

export const CustomerMonthSchema = z
  .object({
    object: z.literal('customer_month'),
    customer: z.string(),
    currency: z.string().meta({ description: 'The currency sold in, or the reporting currency.' }),
    month: z.string().meta({ description: 'YYYY-MM' }),
    previousMrr: z
      .string()
      .nullable()
      .meta({ description: "The customer's MRR at the end of the month before (in a reporting currency: converted at this month's rates; null when the set lacks one)." }),
    mrr: z.string().nullable().meta({ description: "The customer's MRR at the end of this month (null only in a reporting currency, when the set lacks a rate)." }),
    movement: z.enum(CUSTOMER_MOVEMENTS).nullable().meta({
      description: `newBusiness: ${FIGURE_WORDS.newBusiness} expansion: ${FIGURE_WORDS.expansion} contraction: ${FIGURE_WORDS.contraction} churn: ${FIGURE_WORDS.churn} reactivation: ${FIGURE_WORDS.reactivation} retained: the same MRR at both month ends.`,
    }),
  })
  .meta({ id: 'CustomerMonth' });

// The cursor names the last customer of the page: base64url of [currency, customer].
const encodeCursor = (c: CustomerCursor) => Buffer.from(JSON.stringify([c.currency, c.customer])).toString('base64url');
function decodeCursor(cursor: string): CustomerCursor {
  try {
    const [currency, customer] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (typeof currency === 'string' && /^[A-Z]{3}$/.test(currency) && typeof customer === 'string' && !customer.includes('\u0000')) return { currency, customer };
  } catch {
    // not JSON
  }
  throw invalidCursor();
}

export default defineOperation({
  operationId: 'listCustomerMonths',
  method: 'get',
  path: '/v1/datasets/:id/customers',
  surface: 'v1',
  tags: ['Reads'],
  summary: 'Customers of a month, with their movement',
  description:
    "Every customer with MRR at the end of `month` or of the month before, with both figures and the movement between them, ordered by currency then customer (as UTF-8 bytes); filtered by `currency` and `movement`. " +
    'With `reportingCurrency`, each customer once across all their currencies, both month ends converted at the rates of `month` (so a change of rate is never a movement), ordered by customer. ' +
    'Which customers churned in March: `?month=2026-03&movement=churn`. `versionId` reads an earlier version that was active, until its rows are purged (then 404). ' +
    ' Each MRR is rounded on its own, so an expansion of less than half a cent may show equal figures.',
  params: DatasetIdParams,
  query: z.object({
    month: Month.meta({ description: 'The month (YYYY-MM), required.' }),
    currency: Currency.optional().meta({ description: 'Only this currency.' }),
    movement: z.enum(CUSTOMER_MOVEMENTS).optional().meta({ description: 'Only customers with this movement.' }),
    limit: z.coerce.number().int().min(1).max(100).default(20).meta({ description: 'Page size, 1 to 100.' }),
    cursor: z.string().min(1).max(2000).optional().meta({ description: 'nextCursor of the previous page.' }),
    versionId: VersionIdQuery,
    reportingCurrency: ReportingCurrencyQuery,
  }),
  responses: {
    200: {
      description: 'A page of customers.',
      schema: listOf(CustomerMonthSchema, 'CustomerMonthList').extend({
        exchangeRatesId: z.string().optional().meta({ description: 'With reportingCurrency only: the set of rates the figures are converted with.' }),
        missingRates: z
          .array(z.object({ month: z.string(), currency: z.string() }))
          .optional()
          .meta({ description: "With reportingCurrency only: the month's rates the set lacks for currencies with MRR then (customers who need one have null figures)." }),
      }),
      examples: {
        perCurrency: { summary: 'Per currency as sold', value: list(customerMonthExample) },
        reporting: { summary: 'With reportingCurrency=EUR', value: customerMonthsReportingExample },
      },
    },
  },
  problems: ['not-found', 'bad-request'],
  async handle({ res, deps, params, query }) {
    oneCurrency(query);
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    const version = await readableVersion(deps.pool, tenantOf(res), params.id, query.versionId);
    if (version.rowsPurgedAt) throw rowsPurged(version, 'its customers');
    // A large version's customers have a table of their own (sql/029), which its purge drops: one
    // that came after the look above is the same 404, not a 500.
    const purgedMeanwhile = async (error: unknown): Promise<never> => {
      if ((error as { code?: unknown }).code !== UNDEFINED_TABLE) throw error;
      const now = await readableVersion(deps.pool, tenantOf(res), params.id, query.versionId);
      throw now.rowsPurgedAt ? rowsPurged(now, 'its customers') : error;
    };
    if (query.reportingCurrency !== undefined) {
      const reporting = query.reportingCurrency;
      const converted = await readReportingCustomerMonths(deps.pool, tenantOf(res), version.id, reporting, { ...query, after: after?.customer }).catch(purgedMeanwhile);
      const nextCursor = converted.next === undefined ? null : encodeCursor({ currency: reporting, customer: converted.next });
      return void res.json({ object: 'list', data: converted.data, nextCursor, exchangeRatesId: converted.exchangeRatesId, missingRates: converted.missingRates });
    }
    const page = await readCustomerMonths(deps.pool, version.id, { ...query, after }).catch(purgedMeanwhile);
    res.json({ object: 'list', data: page.data, nextCursor: page.next ? encodeCursor(page.next) : null });
  },
});
