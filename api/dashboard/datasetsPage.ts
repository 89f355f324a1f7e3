// The list of the datasets of the account and mode the person looks at.
import type { DatasetOverview } from '../../shared/domain/datasetOverview.ts';
import { escapeHtml } from '../html.ts';
import { decimal, when } from './format.ts';
import { notice, page, scrollingTable } from './layout.ts';
import { DASHBOARD_PATH, type Viewer } from './session.ts';

export function datasetsPage(viewer: Viewer, datasets: DatasetOverview[], nextCursor: string | null, message?: string): string {
  const account = viewer.account!;
  const rows = datasets
    .map(
      (d) => `<tr>
<th scope="row"><a href="${DASHBOARD_PATH}/datasets/${encodeURIComponent(d.id)}">${escapeHtml(d.name ?? d.externalRef)}</a></th>
<td><code>${escapeHtml(d.externalRef)}</code></td>
<td>${d.activeVersionId ? `<code>${escapeHtml(d.activeVersionId)}</code>` : '<span class="muted">none yet</span>'}</td>
<td class="num">${decimal(d.activeRowCount)}</td>
<td>${when(d.lastUploadAt)}</td>
</tr>`,
    )
    .join('\n');
  const table = `<table><caption class="sr-only">Datasets of ${escapeHtml(account.name)} in ${viewer.mode} mode</caption>
<thead><tr><th scope="col">Name</th><th scope="col">External reference</th><th scope="col">Active version</th><th scope="col" class="num">Rows</th><th scope="col">Last upload (UTC)</th></tr></thead>
<tbody>${rows}</tbody></table>`;
  return page(
    'Datasets',
    `${notice(message)}<div class="card"><h1>Datasets</h1>
<p class="muted">${escapeHtml(account.name)}, ${viewer.mode} mode. ${viewer.mode === 'test' ? 'Test-mode datasets are never billed.' : 'Live-mode datasets are your real data.'}</p>
${
  datasets.length === 0
    ? `<p>No datasets in ${viewer.mode} mode yet. Programs create them through the API${viewer.mode === 'test' ? ' with a test key' : ''}.</p>`
    : scrollingTable('Datasets', table)
}
${nextCursor ? `<p><a href="${DASHBOARD_PATH}/datasets?after=${encodeURIComponent(nextCursor)}">Older datasets</a></p>` : ''}
</div>`,
    viewer,
  );
}

/** A person linked to no account yet: nothing to show. */
export function noAccountPage(viewer: Viewer): string {
  return page(
    'No account',
    `<div class="card"><h1>You are not linked to an account yet</h1><p>Ask an administrator of your team's account to add you, then sign up with the invitation code they give you.</p></div>`,
    viewer,
  );
}
