// A dataset's page: its key figures for the latest month, MRR with its movements and active
// customers per currency (a chart and its table side by side), cohorts shaded by retention, its
// versions, the upload form and the exports. Every figure is the API's (readMetrics, readCohorts:
// the same reads as GET …/metrics and …/cohorts), only written for people here.
import type { Dataset } from '../../shared/domain/datasets.ts';
import type { VersionRecord } from '../../shared/domain/versions.ts';
import type { CohortFigures, MonthFigures } from '../../shared/figures/book.ts';
import { FIGURE_WORDS, MOVEMENTS, type Movement } from '../../shared/figures/definitions.ts';
import { escapeHtml } from '../html.ts';
import { barChart } from './charts.ts';
import { decimal, money, monthName, percent, when } from './format.ts';
import { alert, csrfField, notice, page, scrollingTable } from './layout.ts';
import { DASHBOARD_PATH, type Viewer } from './session.ts';
import { versionsTable } from './versionPage.ts';

export type Metrics = { versionId: string; rows: { total: number; contributing: number }; monthly: MonthFigures[] };

export type DatasetView = {
  dataset: Dataset;
  metrics: Metrics | undefined;
  cohorts: CohortFigures[];
  versions: VersionRecord[];
  /** The upload form's idempotency key: one per rendering of the form. */
  uploadKey: string;
  message?: string | undefined;
  error?: string | undefined;
};

const MOVEMENT_NAMES: Record<Movement, string> = {
  newBusiness: 'New business',
  expansion: 'Expansion',
  contraction: 'Contraction',
  churn: 'Churn',
  reactivation: 'Reactivation',
};
const MOVEMENT_COLORS: Record<Movement, string> = {
  newBusiness: '#15803d',
  expansion: '#65a30d',
  reactivation: '#0e7490',
  contraction: '#d97706',
  churn: '#b91c1c',
};
/** Won above zero, lost below. */
const LOST: readonly Movement[] = ['contraction', 'churn'];
const STACK_ORDER: readonly Movement[] = ['newBusiness', 'expansion', 'reactivation', 'contraction', 'churn'];

const slug = (text: string) => text.replace(/[^A-Za-z0-9]/g, '');

/**
 * The month whose figures lead the page: the latest month up to this one in which the currency
 * had customers (a series ends with the month its last customers churn, which says little on
 * its own); the latest month with customers when all are later; the last month otherwise.
 */
export function headlineMonth(series: MonthFigures[], today = new Date()): MonthFigures | undefined {
  const now = today.toISOString().slice(0, 7);
  const withCustomers = series.filter((m) => m.activeCustomers > 0);
  return withCustomers.filter((m) => m.month <= now).at(-1) ?? withCustomers.at(-1) ?? series.at(-1);
}

function keyFigures(currency: string, m: MonthFigures): string {
  const figure = (label: string, value: string, words: string) => `<div><dt title="${escapeHtml(words)}">${label}</dt><dd>${value}</dd></div>`;
  return `<section class="card" aria-labelledby="key-${slug(currency)}"><h2 id="key-${slug(currency)}">${escapeHtml(currency)} at the end of ${monthName(m.month)}</h2>
<dl class="figures">
${figure('MRR', money(m.mrr, currency), FIGURE_WORDS.mrr)}
${figure('ARR', money(m.arr, currency), FIGURE_WORDS.arr)}
${figure('Net new MRR', money(m.movements.netNewMrr, currency), FIGURE_WORDS.netNewMrr)}
${figure('Net revenue retention', percent(m.rates.netRevenueRetention), FIGURE_WORDS.netRevenueRetention)}
${figure('Customer churn', percent(m.rates.customerChurn), FIGURE_WORDS.customerChurn)}
${figure('Active customers', decimal(m.activeCustomers), FIGURE_WORDS.activeCustomers)}
</dl></section>`;
}

function mrrSection(currency: string, series: MonthFigures[]): string {
  const id = `mrr-${slug(currency)}`;
  const chart = barChart({
    id: `${id}-chart`,
    title: `MRR in ${currency} and its movements, by month`,
    description: `From ${monthName(series[0]!.month)} to ${monthName(series.at(-1)!.month)}: bars above zero are new business, expansion and reactivation, below zero contraction and churn; the line is MRR. The table beside it has every figure.`,
    labels: series.map((m) => m.month),
    stacks: STACK_ORDER.map((movement) => ({
      name: MOVEMENT_NAMES[movement],
      color: MOVEMENT_COLORS[movement],
      values: series.map((m) => (LOST.includes(movement) ? -1 : 1) * Number(m.movements[movement].mrr)),
    })),
    line: { name: 'MRR', color: '#111827', values: series.map((m) => Number(m.mrr)) },
  });
  const rows = series
    .map(
      (m) => `<tr><th scope="row">${m.month}</th><td class="num">${decimal(m.mrr)}</td>${MOVEMENTS.map((mv) => `<td class="num">${decimal(m.movements[mv].mrr)}</td>`).join('')}<td class="num">${decimal(m.movements.netNewMrr)}</td></tr>`,
    )
    .join('\n');
  const table = `<table><caption class="sr-only">MRR and movements in ${escapeHtml(currency)}, by month</caption>
<thead><tr><th scope="col">Month</th><th scope="col" class="num">MRR</th>${MOVEMENTS.map((mv) => `<th scope="col" class="num">${MOVEMENT_NAMES[mv]}</th>`).join('')}<th scope="col" class="num">Net new MRR</th></tr></thead>
<tbody>${rows}</tbody></table>`;
  return `<section class="card" aria-labelledby="${id}"><h2 id="${id}">MRR in ${escapeHtml(currency)}</h2>
<div class="pair">${chart}${scrollingTable(`MRR in ${currency}, figures`, table, true)}</div></section>`;
}

function customersSection(currency: string, series: MonthFigures[]): string {
  const id = `customers-${slug(currency)}`;
  const chart = barChart({
    id: `${id}-chart`,
    title: `Active customers in ${currency}, by month`,
    description: `Customers with MRR in ${currency} at each month end, from ${monthName(series[0]!.month)} to ${monthName(series.at(-1)!.month)}. The table beside it has every figure.`,
    labels: series.map((m) => m.month),
    stacks: [{ name: 'Active customers', color: '#4338ca', values: series.map((m) => m.activeCustomers) }],
  });
  const rows = series
    .map((m) => `<tr><th scope="row">${m.month}</th><td class="num">${decimal(m.activeCustomers)}</td><td class="num">${decimal(m.movements.churn.customers)}</td><td class="num">${percent(m.rates.customerChurn)}</td></tr>`)
    .join('\n');
  const table = `<table><caption class="sr-only">Active customers in ${escapeHtml(currency)}, by month</caption>
<thead><tr><th scope="col">Month</th><th scope="col" class="num">Active customers</th><th scope="col" class="num">Churned</th><th scope="col" class="num">Customer churn</th></tr></thead>
<tbody>${rows}</tbody></table>`;
  return `<section class="card" aria-labelledby="${id}"><h2 id="${id}">Active customers in ${escapeHtml(currency)}</h2>
<div class="pair">${chart}${scrollingTable(`Active customers in ${currency}, figures`, table, true)}</div></section>`;
}

/** The shade of a cohort's cell: how much of the cohort still has MRR, in six steps (colour only; the cell shows the API's count). */
const shade = (customers: number, of: number) => (of <= 0 || customers <= 0 ? 0 : Math.min(5, 1 + Math.floor((customers / of) * 5 - 1e-9)));

function cohortsSection(currency: string, cohorts: CohortFigures[]): string {
  const id = `cohorts-${slug(currency)}`;
  const width = Math.max(...cohorts.map((c) => c.months.length));
  const head = Array.from({ length: width }, (_, i) => `<th scope="col" class="num">+${i}</th>`).join('');
  const rows = cohorts
    .map(
      (c) =>
        `<tr><th scope="row">${c.cohort}</th><td class="num">${decimal(c.customers)}</td><td class="num">${decimal(c.mrr)}</td>${c.months
          .map((m) => `<td class="cell r${shade(m.customers, c.customers)}" title="${escapeHtml(`${m.month}: ${m.customers} customers, MRR ${m.mrr}`)}">${decimal(m.customers)}</td>`)
          .join('')}${'<td></td>'.repeat(width - c.months.length)}</tr>`,
    )
    .join('\n');
  const table = `<table class="cohort"><caption class="sr-only">Cohorts in ${escapeHtml(currency)}: customers of each cohort still with MRR, by months since they joined</caption>
<thead><tr><th scope="col">Cohort</th><th scope="col" class="num">Customers</th><th scope="col" class="num">MRR at start</th>${head}</tr></thead>
<tbody>${rows}</tbody></table>`;
  return `<section class="card" aria-labelledby="${id}"><h2 id="${id}">Cohorts in ${escapeHtml(currency)}</h2>
<p class="muted">${escapeHtml(FIGURE_WORDS.cohort)} Each cell counts the cohort's customers with MRR that many months later; the darker, the more of the cohort remains.</p>
${scrollingTable(`Cohorts in ${currency}`, table, true)}
<ul class="legend"><li><span class="r0">none</span></li><li><span class="r1">up to 20 %</span></li><li><span class="r2">up to 40 %</span></li><li><span class="r3">up to 60 %</span></li><li><span class="r4">up to 80 %</span></li><li><span class="r5">up to 100 %</span></li></ul>
</section>`;
}

function uploadForm(viewer: Viewer, view: DatasetView): string {
  const action = `${DASHBOARD_PATH}/datasets/${encodeURIComponent(view.dataset.id)}/versions`;
  return `<section class="card" aria-labelledby="upload"><h2 id="upload">Upload a new version</h2>
<p class="muted">A CSV file of contracts (contractId, customer, product, startDate, endDate, amount, currency). It replaces the dataset's data: upload the whole file, not only what changed.</p>
${alert(view.error)}
<form method="post" action="${action}" enctype="multipart/form-data">${csrfField(viewer.csrf)}
<input type="hidden" name="idempotencyKey" value="${escapeHtml(view.uploadKey)}">
<label class="drop" for="file">Choose a CSV file, or drag one here
<input id="file" name="file" type="file" accept=".csv,text/csv" required></label>
<button class="primary" type="submit">Upload and build</button>
</form></section>`;
}

function exportsSection(viewer: Viewer, dataset: Dataset): string {
  if (!dataset.activeVersionId) return '';
  const action = `${DASHBOARD_PATH}/datasets/${encodeURIComponent(dataset.id)}/exports`;
  const button = (format: string, label: string) =>
    `<form method="post" action="${action}">${csrfField(viewer.csrf)}<input type="hidden" name="format" value="${format}"><button class="secondary" type="submit">${label}</button></form>`;
  return `<section class="card" aria-labelledby="exports"><h2 id="exports">Export the active version</h2>
<p class="muted">The rows of <code>${escapeHtml(dataset.activeVersionId)}</code>, in the contract's columns.</p>
<div class="row">${button('csv', 'Download CSV')}${button('jsonl', 'Download JSONL')}</div></section>`;
}

export function datasetPage(viewer: Viewer, view: DatasetView): string {
  const { dataset, metrics, cohorts } = view;
  const currencies = [...new Set(metrics?.monthly.map((m) => m.currency) ?? [])].sort();
  const seriesOf = (currency: string) => metrics!.monthly.filter((m) => m.currency === currency);
  const headline = currencies
    .map((c) => {
      const m = headlineMonth(seriesOf(c));
      return m ? keyFigures(c, m) : '';
    })
    .join('\n');
  const figures = !metrics
    ? `<section class="card"><h2>Figures</h2><p>No version is active yet: figures appear once an upload builds.</p></section>`
    : currencies.length === 0
      ? `<section class="card"><h2>Figures</h2><p>The active version has ${decimal(metrics.rows.total)} rows and none of them contributes to the figures: each needs startDate, endDate, an amount above zero and a currency.</p></section>`
      : `${headline}
${currencies.map((c) => mrrSection(c, seriesOf(c))).join('\n')}
${currencies.map((c) => customersSection(c, seriesOf(c))).join('\n')}
${[...new Set(cohorts.map((c) => c.currency))].map((c) => cohortsSection(c, cohorts.filter((x) => x.currency === c))).join('\n')}`;
  return page(
    dataset.name ?? dataset.externalRef,
    `<nav class="crumbs" aria-label="Breadcrumb"><a href="${DASHBOARD_PATH}/datasets">Datasets</a></nav>
${notice(view.message)}
<div class="card"><h1>${escapeHtml(dataset.name ?? dataset.externalRef)}</h1>
<p class="muted">External reference <code>${escapeHtml(dataset.externalRef)}</code> · created ${when(dataset.createdAt)} UTC · active version ${
      dataset.activeVersionId ? `<code>${escapeHtml(dataset.activeVersionId)}</code>` : 'none yet'
    }${metrics ? ` · ${decimal(metrics.rows.total)} rows, ${decimal(metrics.rows.contributing)} contributing` : ''}</p></div>
${figures}
<section class="card" aria-labelledby="versions"><h2 id="versions">Versions</h2>${versionsTable(dataset, view.versions)}</section>
${uploadForm(viewer, view)}
${exportsSection(viewer, dataset)}`,
    viewer,
  );
}
