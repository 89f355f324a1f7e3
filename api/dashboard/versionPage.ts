// A dataset's versions as a table, and a version's own page: its status, what its header held,
// its warnings and, when it failed validation, its first row errors and its rejected rows to
// download, fix and upload again.
import type { RowError } from '../../shared/contract/fields.ts';
import type { Dataset } from '../../shared/domain/datasets.ts';
import type { VersionRecord } from '../../shared/domain/versions.ts';
import { escapeHtml } from '../html.ts';
import { decimal, when } from './format.ts';
import { notice, page, scrollingTable } from './layout.ts';
import { DASHBOARD_PATH, type Viewer } from './session.ts';

const versionHref = (v: VersionRecord) => `${DASHBOARD_PATH}/datasets/${encodeURIComponent(v.datasetId)}/versions/${encodeURIComponent(v.id)}`;
const status = (v: VersionRecord) => `<span class="status ${v.status}">${v.status}</span>`;
const warningsOf = (v: VersionRecord) =>
  v.warnings.length === 0 ? '' : `<ul class="plain">${v.warnings.map((w) => `<li>${escapeHtml(w.message)}</li>`).join('')}</ul>`;

export function versionsTable(dataset: Dataset, versions: VersionRecord[]): string {
  if (versions.length === 0) return '<p>Nothing uploaded yet.</p>';
  const rows = versions
    .map(
      (v) => `<tr><th scope="row"><a href="${versionHref(v)}">${escapeHtml(v.id)}</a>${v.id === dataset.activeVersionId ? ' <span class="muted">(active)</span>' : ''}</th>
<td>${status(v)}</td><td class="num">${decimal(v.rowCount)}</td><td class="num">${decimal(v.contributingRowCount)}</td>
<td>${v.status === 'failed' && v.problem ? `${escapeHtml(v.problem.detail)}` : ''}${warningsOf(v)}</td><td>${when(v.createdAt)}</td></tr>`,
    )
    .join('\n');
  return scrollingTable(
    'Versions',
    `<table><caption class="sr-only">Versions of ${escapeHtml(dataset.name ?? dataset.externalRef)}, newest first</caption>
<thead><tr><th scope="col">Version</th><th scope="col">Status</th><th scope="col" class="num">Rows</th><th scope="col" class="num">Contributing</th><th scope="col">Problems and warnings</th><th scope="col">Uploaded (UTC)</th></tr></thead>
<tbody>${rows}</tbody></table>`,
  );
}

export type VersionView = {
  dataset: Dataset;
  version: VersionRecord;
  /** Its first row errors, when it failed validation. */
  errors: RowError[];
  /** Whether its rejected rows can still be downloaded (the file is kept a while). */
  rejectedRowsKept: boolean;
  message?: string | undefined;
};

export function versionPage(viewer: Viewer, view: VersionView): string {
  const { dataset, version, errors } = view;
  const datasetHref = `${DASHBOARD_PATH}/datasets/${encodeURIComponent(dataset.id)}`;
  const columns = version.columns
    ? `<h2>Columns</h2><dl>
<dt>Recognised</dt><dd>${version.columns.recognized.map((c) => `<code>${escapeHtml(c)}</code>`).join(' ') || '—'}</dd>
<dt>Ignored</dt><dd>${version.columns.ignored.map((c) => `<code>${escapeHtml(c)}</code>`).join(' ') || '—'}</dd>
<dt>Missing</dt><dd>${version.columns.missing.map((c) => `<code>${escapeHtml(c)}</code>`).join(' ') || '—'}</dd></dl>`
    : '';
  const warnings = version.warnings.map((w) => `<div class="warning">${escapeHtml(w.message)}</div>`).join('');
  const building = version.status === 'queued' || version.status === 'building';
  let problem = '';
  if (version.status === 'failed' && version.problem) {
    const p = version.problem;
    const rows = errors
      .map((e) => `<tr><td class="num">${decimal(e.row)}</td><td><code>${escapeHtml(e.field)}</code></td><td><code>${escapeHtml(e.code)}</code></td><td>${escapeHtml(e.message)}</td></tr>`)
      .join('\n');
    const download = view.rejectedRowsKept
      ? `<p><a href="${versionHref(version)}/rejected-rows.csv" download>Download the rejected rows (CSV)</a>: each with its row number and problems, to fix in the whole file before uploading it again.</p>`
      : p.type === 'ingest-validation-failed'
        ? '<p class="muted">The file of this version is no longer kept, so its rejected rows cannot be downloaded; its errors are listed below.</p>'
        : '';
    problem = `<section class="card" aria-labelledby="problem"><h2 id="problem">Why it failed</h2>
<div class="alert">${escapeHtml(p.detail)}</div>
${download}
${
  errors.length > 0
    ? `<h3>${errors.length < p.errorCount ? `The first ${decimal(errors.length)} of ${decimal(p.errorCount)} row errors` : `${decimal(p.errorCount)} row error${p.errorCount === 1 ? '' : 's'}`}</h3>
${scrollingTable(
  'Row errors',
  `<table><caption class="sr-only">Row errors, in row order</caption><thead><tr><th scope="col" class="num">Row</th><th scope="col">Field</th><th scope="col">Code</th><th scope="col">Message</th></tr></thead>
<tbody>${rows}</tbody></table>`,
  true,
)}`
    : ''
}</section>`;
  }
  return page(
    `Version ${version.id}`,
    `<nav class="crumbs" aria-label="Breadcrumb"><a href="${DASHBOARD_PATH}/datasets">Datasets</a> › <a href="${datasetHref}">${escapeHtml(dataset.name ?? dataset.externalRef)}</a></nav>
${notice(view.message)}
<div class="card"><h1>Version ${escapeHtml(version.id)}</h1>
<p>${status(version)}${version.id === dataset.activeVersionId ? ' This is the dataset\'s active version.' : ''}</p>
<dl class="figures">
<div><dt>Rows</dt><dd>${decimal(version.rowCount)}</dd></div>
<div><dt>Contributing rows</dt><dd>${decimal(version.contributingRowCount)}</dd></div>
<div><dt>Uploaded (UTC)</dt><dd>${when(version.createdAt)}</dd></div>
<div><dt>Finished (UTC)</dt><dd>${when(version.completedAt)}</dd></div>
</dl>
${building ? `<p>Still ${version.status}: ${decimal(version.rowsProcessed)} rows read so far. <a href="${versionHref(version)}">Reload</a> to see how it ends.</p>` : ''}
${warnings}${columns}</div>
${problem}`,
    viewer,
  );
}
