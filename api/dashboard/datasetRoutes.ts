// The pages of the datasets the person looks at: the list, a dataset (its figures through the
// API's reads), a version (its errors and rejected rows), the upload form's answer and exports.
import { randomUUID } from 'node:crypto';
import type { Response, Router } from 'express';
import { z } from 'zod';
import { blobIsStored } from '../../shared/blobs/blobRecords.ts';
import { datasetsOverview } from '../../shared/domain/datasetOverview.ts';
import type { Dataset } from '../../shared/domain/datasets.ts';
import { EXPORT_FORMAT_NAMES } from '../../shared/domain/exportFormats.ts';
import { findExport } from '../../shared/domain/exports.ts';
import { readMetrics } from '../../shared/domain/metricsAndCatalog.ts';
import { activeVersionOf, readCohorts } from '../../shared/domain/monthlyFigures.ts';
import { rejectedRowsFile } from '../../shared/domain/rejectedRows.ts';
import { sendPaced } from '../../shared/platform/pacedWrites.ts';
import { pageOfRowErrors } from '../../shared/domain/versionErrors.ts';
import { FINISHED, findVersion, listVersions, type VersionRecord } from '../../shared/domain/versions.ts';
import type { DashboardContext, Looking } from './context.ts';
import { datasetPage, type DatasetView, type Metrics } from './datasetPage.ts';
import { datasetsPage } from './datasetsPage.ts';
import { requestExport, sendExportDownload } from './exportFiles.ts';
import { statusPage } from './layout.ts';
import { receiveUploadForm } from './upload.ts';
import { versionPage } from './versionPage.ts';

/** How long the upload form waits for the build before showing the version still building. */
const UPLOAD_WAIT_MS = 30_000;
const DATASETS_PER_PAGE = 50;
const VERSIONS_SHOWN = 20;
const ERRORS_SHOWN = 100;

const ExportForm = z.object({ format: z.enum(EXPORT_FORMAT_NAMES) });

export function datasetRoutes(router: Router, ctx: DashboardContext): void {
  const { html, refused, notFound, forms, viewing, postedForm, datasetOf, datasetPath } = ctx;
  const { deps, sessions } = ctx;
  const { pool, log } = deps;
  const versionPath = (v: { id: string; datasetId: string }) => ctx.versionPath(v.datasetId, v.id);

  router.get('/datasets', async (req, res) => {
    const viewer = await viewing(req, res);
    if (!viewer) return;
    const after = typeof req.query['after'] === 'string' ? req.query['after'] : undefined;
    const page = await datasetsOverview(pool, viewer.tenant, { limit: DATASETS_PER_PAGE, cursor: after });
    html(res, 200, datasetsPage(viewer, page.data, page.nextCursor));
  });

  const showDataset = async (res: Response, viewer: Looking, dataset: Dataset, extra: Partial<DatasetView> = {}, status = 200) => {
    const [metrics, versionId, versions] = await Promise.all([
      readMetrics(pool, viewer.tenant, dataset.id, {}),
      activeVersionOf(pool, viewer.tenant, dataset.id),
      listVersions(pool, dataset.id, { limit: VERSIONS_SHOWN }),
    ]);
    const cohorts = versionId ? await readCohorts(pool, versionId, undefined) : [];
    html(
      res,
      status,
      datasetPage(viewer, { dataset, metrics: metrics as Metrics | undefined, cohorts, versions: versions.versions, uploadKey: randomUUID(), ...extra }),
    );
  };

  router.get('/datasets/:datasetId', async (req, res) => {
    const viewer = await viewing(req, res);
    const dataset = viewer && (await datasetOf(req, res, viewer));
    if (!viewer || !dataset) return;
    const uploaded = typeof req.query['uploaded'] === 'string' ? req.query['uploaded'] : undefined;
    await showDataset(res, viewer, dataset, { message: uploaded ? `Version ${uploaded} is now active.` : undefined });
  });

  router.post('/datasets/:datasetId/versions', async (req, res) => {
    const viewer = await viewing(req, res);
    if (!viewer) return;
    // A dataset of another account or mode: the 404 page, before the file is read.
    const dataset = await datasetOf(req, res, viewer);
    if (!dataset) return;
    const outcome = await receiveUploadForm(req, res, deps, { sessions, viewer, tenant: viewer.tenant, datasetId: dataset.id, versionPath: (v) => ctx.versionPath(dataset.id, v.id) });
    switch (outcome.kind) {
      case 'refused':
        return refused(res, viewer);
      case 'no-file':
        return showDataset(res, viewer, dataset, { error: 'Choose a CSV file to upload.' }, 400);
      case 'malformed':
        return showDataset(res, viewer, dataset, { error: `The form could not be read (${outcome.message}). Try again.` }, 400);
      case 'key-reused':
        return showDataset(res, viewer, dataset, { error: 'This form was already used to upload another file. Nothing was uploaded: choose the file again here.' }, 422);
      case 'busy':
        return showDataset(res, viewer, dataset, { error: 'This form is already being uploaded. Wait a moment and look at the versions below.' }, 409);
      case 'replayed':
        return res.redirect(303, outcome.location);
      case 'created': {
        let version: VersionRecord = outcome.version;
        await deps.outcomes.waitFor(version.id, UPLOAD_WAIT_MS, async () => {
          version = (await findVersion(pool, viewer.tenant, dataset.id, version.id)) ?? version;
          return FINISHED.includes(version.status);
        });
        log.info({ personId: viewer.personId, datasetId: dataset.id, versionId: version.id, status: version.status }, 'version uploaded on the dashboard');
        return res.redirect(303, version.status === 'active' ? `${datasetPath(dataset.id)}?uploaded=${encodeURIComponent(version.id)}` : versionPath(version));
      }
    }
  });

  router.get('/datasets/:datasetId/versions/:versionId', async (req, res) => {
    const viewer = await viewing(req, res);
    const dataset = viewer && (await datasetOf(req, res, viewer));
    if (!viewer || !dataset) return;
    const version = await findVersion(pool, viewer.tenant, dataset.id, String(req.params['versionId']));
    if (!version) return notFound(res, viewer);
    const failedValidation = version.status === 'failed' && version.problem?.type === 'ingest-validation-failed';
    const errors = failedValidation ? await pageOfRowErrors(pool, version.id, { limit: ERRORS_SHOWN }) : undefined;
    const rejectedRowsKept = failedValidation && version.blobId !== null && (await blobIsStored(pool, version.blobId));
    html(res, 200, versionPage(viewer, { dataset, version, errors: errors && errors !== 'bad-cursor' ? errors.errors : [], rejectedRowsKept }));
  });

  router.get('/datasets/:datasetId/versions/:versionId/rejected-rows.csv', async (req, res) => {
    const viewer = await viewing(req, res);
    const dataset = viewer && (await datasetOf(req, res, viewer));
    if (!viewer || !dataset) return;
    const version = await findVersion(pool, viewer.tenant, dataset.id, String(req.params['versionId']));
    const file = version && (await rejectedRowsFile(pool, deps.blobs, version));
    if (!version || !file || file === 'none' || file === 'gone') return notFound(res, viewer);
    res.status(200).attachment(`${version.id}-rejected-rows.csv`).type('text/csv; charset=utf-8');
    await sendPaced(res, deps.blobs.readInPages(file), deps.config.clientStallTimeoutMs);
  });

  router.post('/datasets/:datasetId/exports', forms, async (req, res) => {
    const viewer = await postedForm(req, res);
    const dataset = viewer && (await datasetOf(req, res, viewer));
    if (!viewer || !dataset) return;
    const form = ExportForm.safeParse(req.body);
    if (!form.success) return showDataset(res, viewer, dataset, { error: 'Choose CSV or JSONL.' }, 400);
    const exp = await requestExport(deps, viewer.tenant, dataset, form.data.format);
    if (!exp) return notFound(res, viewer);
    const exportPath = `${datasetPath(dataset.id)}/exports/${encodeURIComponent(exp.id)}`;
    res.redirect(303, exp.status === 'ready' ? `${exportPath}/download` : exportPath);
  });

  router.get('/datasets/:datasetId/exports/:exportId', async (req, res) => {
    const viewer = await viewing(req, res);
    const dataset = viewer && (await datasetOf(req, res, viewer));
    if (!viewer || !dataset) return;
    const exp = await findExport(pool, viewer.tenant, dataset.id, String(req.params['exportId']));
    if (!exp) return notFound(res, viewer);
    const path = `${datasetPath(dataset.id)}/exports/${encodeURIComponent(exp.id)}`;
    const text =
      exp.status === 'ready'
        ? `<p><a href="${path}/download">Download ${exp.format.toUpperCase()}</a></p>`
        : exp.status === 'failed'
          ? '<p>The export failed. Go back to the dataset and ask for it again.</p>'
          : `<p>The export is still ${exp.status}. <a href="${path}">Reload</a> in a few seconds.</p>`;
    html(res, 200, statusPage(`Export ${exp.id}`, text, viewer, { href: datasetPath(dataset.id), label: `Back to ${dataset.name ?? dataset.externalRef}` }));
  });

  router.get('/datasets/:datasetId/exports/:exportId/download', async (req, res) => {
    const viewer = await viewing(req, res);
    const dataset = viewer && (await datasetOf(req, res, viewer));
    if (!viewer || !dataset) return;
    const exp = await findExport(pool, viewer.tenant, dataset.id, String(req.params['exportId']));
    if (!exp || exp.status !== 'ready' || !exp.blobId) return notFound(res, viewer);
    await sendExportDownload(deps, res, { ...exp, blobId: exp.blobId });
  });

}
