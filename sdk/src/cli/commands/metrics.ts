// `dsvc metrics`, `dsvc cohorts`, `dsvc customers` and `dsvc catalog`: what is computed from the
// active version. For people, metrics draws each currency's MRR and movements (chart.ts) above
// its table, or, with --reporting-currency, the whole business's in that currency; --json prints
// the service's document.
import { type Command, InvalidArgumentError, Option } from 'commander';
import type { Catalog, Cohorts, CustomerMonth, CustomerMovement, Metrics, MonthFigures, Reporting, ReportingMonth } from '../../types.ts';
import { NotFoundError } from '../../errors.ts';
import { type ChartMonth, mrrChart } from '../chart.ts';
import { action, findDataset, month, wholeNumber } from '../context.ts';
import { table } from '../output.ts';

const MOVEMENTS: CustomerMovement[] = ['newBusiness', 'expansion', 'contraction', 'churn', 'reactivation', 'retained'];
/** How many months after its first a cohort's table shows. */
const COHORT_MONTHS = 12;

export const currencyCode = (value: string) => {
  const code = value.toUpperCase();
  if (!/^[A-Z]{3}$/.test(code)) throw new InvalidArgumentError('must be an ISO 4217 code, e.g. EUR.');
  return code;
};

/** The terminal's width and whether it takes colours (stdout a terminal, NO_COLOR unset). */
const terminal = () => ({
  columns: process.stdout.columns || Number(process.env['COLUMNS']) || 100,
  color: Boolean(process.stdout.isTTY) && !process.env['NO_COLOR'],
});

/** A movement's cell: its MRR and, in brackets, its customers; `-` when none. */
const movement = ({ customers, mrr }: { customers: number; mrr: string }) => (customers === 0 ? '-' : `${mrr} (${customers})`);

const monthRow = (m: MonthFigures) => ({
  month: m.month,
  customers: m.activeCustomers,
  mrr: m.mrr,
  arr: m.arr,
  arpa: m.arpa,
  newBusiness: movement(m.movements.newBusiness),
  expansion: movement(m.movements.expansion),
  contraction: movement(m.movements.contraction),
  churn: movement(m.movements.churn),
  reactivation: movement(m.movements.reactivation),
  netNewMrr: m.movements.netNewMrr,
  customerChurn: m.rates.customerChurn,
  grossMrrChurn: m.rates.grossMrrChurn,
  nrr: m.rates.netRevenueRetention,
  grr: m.rates.grossRevenueRetention,
});

function metricsText(m: Metrics): string {
  const { excluded } = m.rows;
  const head =
    `version  ${m.versionId}\nrows     ${m.rows.total} (${m.rows.contributing} contributing; excluded: startDate ${excluded.startDate}, endDate ${excluded.endDate}, amount ${excluded.amount}, currency ${excluded.currency})\n` +
    `\ncurrencies:\n${table(m.currencies)}`;
  const settings = terminal();
  const perCurrency = m.currencies.map(({ currency }) => {
    const months = m.monthly.filter((f) => f.currency === currency);
    const chart = mrrChart(currency, months, settings);
    return `\n${chart}\n${currency} monthly (movements: MRR (customers); rates: customer churn, gross MRR churn, net and gross revenue retention):\n${table(months.map(monthRow))}`;
  });
  return `${head}${perCurrency.join('')}`;
}

/** A month of the reporting series as the chart draws it (a month lacking a rate is not drawn). */
const chartMonth = (m: ReportingMonth): ChartMonth | undefined =>
  m.mrr === null
    ? undefined
    : {
        month: m.month,
        mrr: m.mrr,
        movements: Object.fromEntries((['newBusiness', 'expansion', 'reactivation', 'contraction', 'churn'] as const).map((k) => [k, { mrr: m.movements[k].mrr ?? '0' }])) as ChartMonth['movements'],
      };

/** A reporting movement's cell: as movement(), `?` for a month lacking a rate. */
const reportingMovement = ({ customers, mrr }: { customers: number | null; mrr: string | null }) => (customers === null ? '?' : movement({ customers, mrr: mrr! }));

const reportingRow = (m: ReportingMonth) => ({
  month: m.month,
  customers: m.activeCustomers ?? '?',
  mrr: m.mrr ?? '?',
  arr: m.arr ?? '?',
  arpa: m.arpa,
  newBusiness: reportingMovement(m.movements.newBusiness),
  expansion: reportingMovement(m.movements.expansion),
  contraction: reportingMovement(m.movements.contraction),
  churn: reportingMovement(m.movements.churn),
  reactivation: reportingMovement(m.movements.reactivation),
  netNewMrr: m.movements.netNewMrr ?? '?',
  fxImpact: m.movements.fxImpact ?? '?',
  customerChurn: m.rates.customerChurn,
  grossMrrChurn: m.rates.grossMrrChurn,
  nrr: m.rates.netRevenueRetention,
  grr: m.rates.grossRevenueRetention,
});

/** The whole business in the reporting currency: its chart, its table, and the rates its months lack. */
function reportingText(m: Metrics & { reporting: Reporting }): string {
  const r = m.reporting;
  const drawn = r.monthly.map(chartMonth).filter((x) => x !== undefined);
  const lacking = r.missingRates.length === 0 ? '' : `
months shown ? lack a rate of the set ${r.exchangeRatesId}: ${r.missingRates.map((x) => `${x.currency} ${x.month}`).join(', ')}
`;
  return (
    `version  ${m.versionId}
rates    ${r.exchangeRatesId} (every currency converted to ${r.currency}; each customer counted once)
` +
    `
${mrrChart(r.currency, drawn, terminal())}
${r.currency} monthly (movements at each month's rates: MRR (customers); fxImpact: what the change of rates moved; rates as above):
` +
    `${table(r.monthly.map(reportingRow))}${lacking}`
  );
}

/** Cohorts as one table a currency: each cohort's customers and MRR, then the share of that MRR left at each later month end. */
function cohortsText(c: Cohorts): string {
  if (c.data.length === 0) return `version  ${c.versionId}\n\n(no cohorts: no month end finds a contract active)\n`;
  const currencies = [...new Set(c.data.map((d) => d.currency))];
  return (
    `version  ${c.versionId}\n` +
    currencies
      .map((currency) => {
        const rows = c.data
          .filter((d) => d.currency === currency)
          .map((d) => {
            const start = Number(d.mrr);
            const shares = Object.fromEntries(
              Array.from({ length: COHORT_MONTHS + 1 }, (_, k) => {
                const at = d.months[k];
                // `?`: a month the set of rates lacks a rate for (reporting currency only).
                return [`+${k}`, at === undefined ? '' : at.mrr === null || d.mrr === null ? '?' : start > 0 ? `${Math.round((100 * Number(at.mrr)) / start)}%` : '-'];
              }),
            );
            return { cohort: d.cohort, customers: d.customers ?? '?', mrr: d.mrr ?? '?', ...shares };
          });
        const whole = c.exchangeRatesId === undefined ? '' : ` (the whole business, each customer once, converted with ${c.exchangeRatesId})`;
        return `\n${currency}${whole}: each cohort's MRR left at its month ends, as a share of its first (+0 is the cohort's month; --json for every month and count):\n${table(rows)}`;
      })
      .join('') +
    lackingRates(c.missingRates, c.exchangeRatesId)
  );
}

/** The rates the set lacked, which made the `?` figures. */
const lackingRates = (missing: { month: string; currency: string }[] | undefined, set: string | undefined) =>
  !missing || missing.length === 0 ? '' : `\n? lacks a rate of the set ${set}: ${missing.map((x) => `${x.currency} ${x.month}`).join(', ')}\n`;

function catalogText(c: Catalog): string {
  return `version  ${c.versionId}\nrows     ${c.rowCount}\n\nfields:\n${table(c.fields)}\nproducts:\n${table(c.products)}`;
}

const customerRow = (c: CustomerMonth) => ({ customer: c.customer, currency: c.currency, previousMrr: c.previousMrr ?? '?', mrr: c.mrr ?? '?', movement: c.movement ?? '?' });

export function metricsCommands(root: Command): void {
  root
    .command('metrics')
    .description("the active version's metrics: each currency's MRR drawn with its movements, then its months as a table")
    .argument('<dataset>', 'its id (ds_…) or externalRef')
    .addOption(new Option('--from <month>', 'first month, YYYY-MM').argParser(month))
    .addOption(new Option('--to <month>', 'last month, YYYY-MM').argParser(month))
    .addOption(new Option('--currency <code>', 'only this currency (with --json too)').argParser(currencyCode).conflicts('reportingCurrency'))
    .addOption(new Option('--reporting-currency <code>', 'the whole business in this currency, converted with your exchange rates in force').argParser(currencyCode))
    .action(
      action(async ({ service, out, opts }, ref: string) => {
        const o = opts<{ from?: string; to?: string; currency?: string; reportingCurrency?: string }>();
        const dataset = await findDataset(service, ref);
        const range = { ...(o.from && { from: o.from }), ...(o.to && { to: o.to }) };
        if (o.reportingCurrency) {
          const converted = await service.datasets.metrics(dataset.id, { ...range, reportingCurrency: o.reportingCurrency });
          return out.result(converted as Metrics & { reporting: Reporting }, reportingText);
        }
        const metrics = await service.datasets.metrics(dataset.id, range);
        if (o.currency) {
          const known = metrics.currencies.map((c) => c.currency);
          if (!known.includes(o.currency)) {
            const detail = `No contributing contract of ${dataset.id} is in ${o.currency}; its currencies: ${known.join(', ') || 'none'}.`;
            throw new NotFoundError({ type: 'not-found', title: 'Not found', status: 404, detail });
          }
          metrics.currencies = metrics.currencies.filter((c) => c.currency === o.currency);
          metrics.monthly = metrics.monthly.filter((m) => m.currency === o.currency);
        }
        out.result(metrics, metricsText);
      }),
    );
  root
    .command('cohorts')
    .description("the active version's cohorts: customers by the month of their new business, and the share of their MRR left at each month end after")
    .argument('<dataset>', 'its id (ds_…) or externalRef')
    .addOption(new Option('--currency <code>', 'only this currency').argParser(currencyCode).conflicts('reportingCurrency'))
    .addOption(new Option('--reporting-currency <code>', 'the whole business in this currency (each customer once), converted with your exchange rates in force').argParser(currencyCode))
    .action(
      action(async ({ service, out, opts }, ref: string) => {
        const o = opts<{ currency?: string; reportingCurrency?: string }>();
        const dataset = await findDataset(service, ref);
        const params = { ...(o.currency && { currency: o.currency }), ...(o.reportingCurrency && { reportingCurrency: o.reportingCurrency }) };
        out.result(await service.datasets.cohorts(dataset.id, params), cohortsText);
      }),
    );
  root
    .command('customers')
    .description('the customers with MRR at the end of a month or of the month before, with their movement (who churned in March: --month 2026-03 --movement churn)')
    .argument('<dataset>', 'its id (ds_…) or externalRef')
    .requiredOption('--month <month>', 'the month, YYYY-MM', month)
    .addOption(new Option('--movement <movement>', 'only customers with this movement').choices(MOVEMENTS))
    .addOption(new Option('--currency <code>', 'only this currency').argParser(currencyCode).conflicts('reportingCurrency'))
    .addOption(new Option('--reporting-currency <code>', 'each customer once, both month ends converted to this currency at the month\'s rates').argParser(currencyCode))
    .addOption(new Option('--limit <n>', 'at most this many (default 100)').argParser(wholeNumber(1, 100)).default(100))
    .option('--all', 'every customer, however many')
    .action(
      action(async ({ service, out, opts }, ref: string) => {
        const o = opts<{ month: string; movement?: CustomerMovement; currency?: string; reportingCurrency?: string; limit: number; all?: boolean }>();
        const dataset = await findDataset(service, ref);
        const params = {
          month: o.month,
          ...(o.movement && { movement: o.movement }),
          ...(o.currency && { currency: o.currency }),
          ...(o.reportingCurrency && { reportingCurrency: o.reportingCurrency }),
        };
        let customers: CustomerMonth[] = [];
        let more = false;
        if (o.all) {
          for await (const c of service.datasets.customersAll(dataset.id, { ...params, limit: 100 })) customers.push(c);
        } else {
          const page = await service.datasets.customers(dataset.id, { ...params, limit: o.limit });
          customers = page.data;
          more = page.nextCursor !== null;
        }
        out.result(customers, (list: CustomerMonth[]) => table(list.map(customerRow)));
        if (more) out.note(`More customers than these ${customers.length}: --all lists every one.`);
        if (customers.some((c) => c.mrr === null)) out.note('? : the set of exchange rates in force lacks a rate of that month for a currency of this customer (--json shows missingRates).');
      }),
    );
  root
    .command('catalog')
    .description("the active version's catalog: fields and products")
    .argument('<dataset>', 'its id (ds_…) or externalRef')
    .action(action(async ({ service, out }, ref: string) => out.result(await service.datasets.catalog((await findDataset(service, ref)).id), catalogText)));
}
