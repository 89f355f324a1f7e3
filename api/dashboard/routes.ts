// /dashboard: the people's dashboard (../shared/spec/contract.md, "The people's dashboard").
// Server-rendered pages for people linked to an account: sign in and sign up, the datasets of
// one account in one mode, a dataset's figures, versions, upload and exports. The figures and
// every change go through the domain (shared/), exactly as the API's operations do; nothing
// here imports them. Anything of another account or mode is a 404 page; a form without its
// token is a 403 page and changes nothing.
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import express, { type ErrorRequestHandler, type Request, type Response, type Router } from 'express';
import { z } from 'zod';
import { blobIsStored } from '../../shared/blobs/blobRecords.ts';
import { TooLarge } from '../../shared/blobs/blobStore.ts';
import { datasetsOverview } from '../../shared/domain/datasetOverview.ts';
import { type Dataset, findDataset, type Tenant } from '../../shared/domain/datasets.ts';
import { EXPORT_FORMAT_NAMES } from '../../shared/domain/exportFormats.ts';
import { findExport } from '../../shared/domain/exports.ts';
import { readMetrics } from '../../shared/domain/metricsAndCatalog.ts';
import { activeVersionOf, readCohorts } from '../../shared/domain/monthlyFigures.ts';
import { rejectedRowsCsv } from '../../shared/domain/rejectedRows.ts';
import { pageOfRowErrors } from '../../shared/domain/versionErrors.ts';
import { FINISHED, findVersion, listVersions, type VersionRecord } from '../../shared/domain/versions.ts';
import { clientKeyOf } from '../../shared/platform/addresses.ts';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH, PasswordChecksBusy } from '../../shared/platform/passwords.ts';
import { chooseDashboardView } from '../../shared/tenancy/dashboardSessions.ts';
import { signIn } from '../../shared/tenancy/people.ts';
import { signUp } from '../../shared/tenancy/signUp.ts';
import type { Deps } from '../defineOperation.ts';
import { SIGN_IN_LOCKED, SIGN_IN_MISMATCH, SIGN_UP_REFUSED } from '../oauth/pages.ts';
import { signInPage, signUpPage } from './accessPages.ts';
import { type CohortFigures, datasetPage, type DatasetView, type Metrics } from './datasetPage.ts';
import { datasetsPage, noAccountPage } from './datasetsPage.ts';
import { requestExport, sendExportDownload } from './exportFiles.ts';
import { messagePage, statusPage } from './layout.ts';
import { DASHBOARD_PATH, DashboardSessions, type Viewer } from './session.ts';
import { receiveUploadForm } from './upload.ts';
import { versionPage } from './versionPage.ts';

export type DashboardDeps = Pick<Deps, 'config' | 'pool' | 'log' | 'boss' | 'outcomes' | 'blobs'> & { sessionKey: string };

/** How long the upload form waits for the build before showing the version still building. */
const UPLOAD_WAIT_MS = 30_000;
const DATASETS_PER_PAGE = 50;
const VERSIONS_SHOWN = 20;
const ERRORS_SHOWN = 100;

const SignInForm = z.object({ email: z.string().trim().min(1).max(254), password: z.string().min(1).max(MAX_PASSWORD_LENGTH) });
const SignUpForm = z.object({
  email: z.string().trim().max(254).pipe(z.email()),
  invitationCode: z.string().trim().min(1).max(100),
  password: z.string().min(MIN_PASSWORD_LENGTH).max(MAX_PASSWORD_LENGTH),
});
const ViewForm = z.object({ account: z.string().min(1).max(100), mode: z.enum(['test', 'live']) });
const ExportForm = z.object({ format: z.enum(EXPORT_FORMAT_NAMES) });

const field = (body: unknown, name: string) => {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value.trim() : undefined;
};

export function dashboardRoutes(deps: DashboardDeps): Router {
  const { pool, log, config } = deps;
  const sessions = new DashboardSessions(pool, deps.sessionKey, config.baseUrl);
  const router = express.Router();
  const html = (res: Response, status: number, body: string) => void res.status(status).type('html').send(body);
  const notFound = (res: Response, viewer?: Viewer) =>
    html(res, 404, messagePage('Not found', 'There is nothing here: it may be in another account or mode, or it was deleted.', viewer));
  const refused = (res: Response, viewer?: Viewer) =>
    html(res, 403, messagePage('This form has expired', 'Nothing was changed. Go back, reload the page and try again.', viewer));
  const datasetPath = (id: string) => `${DASHBOARD_PATH}/datasets/${encodeURIComponent(id)}`;
  const versionPath = (v: { id: string; datasetId?: string }, datasetId = v.datasetId!) => `${datasetPath(datasetId)}/versions/${encodeURIComponent(v.id)}`;

  router.use((_req, res, next) => {
    res.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' });
    next();
  });
  const forms = express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 20, inflate: false });

  /** The signed-in person looking at an account, or the sign-in page (GET) or a 403 (a form). */
  const viewing = async (req: Request, res: Response): Promise<(Viewer & { tenant: Tenant }) | undefined> => {
    const viewer = await sessions.viewerOf(req);
    if (!viewer) {
      if (req.method === 'GET' || req.method === 'HEAD') res.redirect(303, `${DASHBOARD_PATH}/sign-in`);
      else refused(res);
      return undefined;
    }
    if (!viewer.account) {
      html(res, 200, noAccountPage(viewer));
      return undefined;
    }
    return { ...viewer, tenant: { accountId: viewer.account.id, mode: viewer.mode } };
  };
  /** A signed-in person's urlencoded form, when it carries their token. */
  const postedForm = async (req: Request, res: Response) => {
    const viewer = await viewing(req, res);
    if (!viewer) return undefined;
    if (!sessions.formIsOurs(req, viewer, req.body)) return void refused(res, viewer);
    return viewer;
  };
  /** The dataset of the path, in the account and mode looked at; else the 404 page. */
  const datasetOf = async (req: Request, res: Response, viewer: Viewer & { tenant: Tenant }): Promise<Dataset | undefined> => {
    const dataset = await findDataset(pool, viewer.tenant, String(req.params['datasetId']));
    if (!dataset) notFound(res, viewer);
    return dataset;
  };

  // Signing in, up and out.
  router.get('/', async (req, res) => res.redirect(303, (await sessions.viewerOf(req)) ? `${DASHBOARD_PATH}/datasets` : `${DASHBOARD_PATH}/sign-in`));
  router.get('/sign-in', async (req, res) => {
    if (await sessions.viewerOf(req)) return res.redirect(303, `${DASHBOARD_PATH}/datasets`);
    html(res, 200, signInPage(sessions.formToken(req, res), { notice: req.query['signedOut'] === '1' ? 'You are signed out.' : undefined }));
  });
  router.post('/sign-in', forms, async (req, res) => {
    if (!sessions.anonymousFormIsOurs(req, req.body)) return refused(res);
    const email = field(req.body, 'email');
    const again = (status: number, error: string) => html(res, status, signInPage(sessions.formToken(req, res), { email, error }));
    const form = SignInForm.safeParse(req.body);
    if (!form.success) return again(400, 'Enter your email address and your password.');
    let person;
    try {
      person = await signIn(pool, form.data.email, form.data.password, clientKeyOf(req.ip));
    } catch (error) {
      if (!(error instanceof PasswordChecksBusy)) throw error;
      res.set('Retry-After', '5');
      return again(503, 'Too many sign-ins from your network right now. Try again in a few seconds.');
    }
    if (person === 'locked') return again(401, SIGN_IN_LOCKED);
    if (!person) return again(401, SIGN_IN_MISMATCH);
    await sessions.signIn(res, person.personId);
    log.info({ personId: person.personId }, 'person signed in to the dashboard');
    res.redirect(303, `${DASHBOARD_PATH}/datasets`);
  });
  router.get('/sign-up', (req, res) => html(res, 200, signUpPage(sessions.formToken(req, res), MIN_PASSWORD_LENGTH)));
  router.post('/sign-up', forms, async (req, res) => {
    if (!sessions.anonymousFormIsOurs(req, req.body)) return refused(res);
    const email = field(req.body, 'email');
    const again = (status: number, error: string) => html(res, status, signUpPage(sessions.formToken(req, res), MIN_PASSWORD_LENGTH, { email, error }));
    const form = SignUpForm.safeParse(req.body);
    if (!form.success) {
      const issue = form.error.issues[0]?.path[0];
      return again(
        400,
        issue === 'email'
          ? 'Enter a valid email address.'
          : issue === 'invitationCode'
            ? 'Enter the invitation code your administrator gave you.'
            : `Choose a password of at least ${MIN_PASSWORD_LENGTH} characters.`,
      );
    }
    let outcome;
    try {
      outcome = await signUp(pool, form.data.email, form.data.password, form.data.invitationCode, clientKeyOf(req.ip));
    } catch (error) {
      if (!(error instanceof PasswordChecksBusy)) throw error;
      res.set('Retry-After', '5');
      return again(503, 'Too many sign-ups from your network right now. Try again in a few seconds.');
    }
    // One answer whatever the reason (a taken email, a wrong code): see signUp().
    if (outcome === 'refused') return again(400, SIGN_UP_REFUSED);
    await sessions.signIn(res, outcome.personId);
    log.info({ personId: outcome.personId }, 'person signed up on the dashboard');
    res.redirect(303, `${DASHBOARD_PATH}/datasets`);
  });
  router.post('/sign-out', forms, async (req, res) => {
    const viewer = await sessions.viewerOf(req);
    if (viewer && !sessions.formIsOurs(req, viewer, req.body)) return refused(res, viewer);
    await sessions.signOut(req, res);
    res.redirect(303, `${DASHBOARD_PATH}/sign-in?signedOut=1`);
  });

  // One account and one mode at a time: the switch, remembered for the person.
  router.post('/view', forms, async (req, res) => {
    const viewer = await postedForm(req, res);
    if (!viewer) return;
    const form = ViewForm.safeParse(req.body);
    if (!form.success || !viewer.accounts.some((a) => a.id === form.data.account)) return notFound(res, viewer);
    await chooseDashboardView(pool, viewer.personId, { accountId: form.data.account, mode: form.data.mode });
    res.redirect(303, `${DASHBOARD_PATH}/datasets`);
  });

  router.get('/datasets', async (req, res) => {
    const viewer = await viewing(req, res);
    if (!viewer) return;
    const after = typeof req.query['after'] === 'string' ? req.query['after'] : undefined;
    const page = await datasetsOverview(pool, viewer.tenant, { limit: DATASETS_PER_PAGE, cursor: after });
    html(res, 200, datasetsPage(viewer, page.data, page.nextCursor));
  });

  const showDataset = async (res: Response, viewer: Viewer & { tenant: Tenant }, dataset: Dataset, extra: Partial<DatasetView> = {}, status = 200) => {
    const [metrics, versionId, versions] = await Promise.all([
      readMetrics(pool, viewer.tenant, dataset.id, {}),
      activeVersionOf(pool, viewer.tenant, dataset.id),
      listVersions(pool, dataset.id, { limit: VERSIONS_SHOWN }),
    ]);
    const cohorts = versionId ? ((await readCohorts(pool, versionId, undefined)) as CohortFigures[]) : [];
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
    // A dataset of another account or mode: refused before the body is read.
    const dataset = await datasetOf(req, res, viewer);
    if (!dataset) return;
    const outcome = await receiveUploadForm(req, res, deps, { sessions, viewer, tenant: viewer.tenant, datasetId: dataset.id, versionPath: (v) => versionPath(v, dataset.id) });
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
    const failedValidation = version?.status === 'failed' && version.problem?.type === 'ingest-validation-failed';
    if (!version || !failedValidation || !version.blobId || !(await blobIsStored(pool, version.blobId))) return notFound(res, viewer);
    res.status(200).attachment(`${version.id}-rejected-rows.csv`).type('text/csv; charset=utf-8');
    await pipeline(Readable.from(rejectedRowsCsv(pool, deps.blobs, { id: version.id, blobId: version.blobId })), res);
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

  // Anything else under /dashboard is a page that is not there.
  router.use(async (req, res) => notFound(res, await sessions.viewerOf(req).catch(() => undefined)));
  const failed: ErrorRequestHandler = (error, req, res, next) => {
    if (res.headersSent) return next(error);
    if (error instanceof TooLarge) return html(res, 413, messagePage('The file is too large', `Files up to ${config.maxUploadBytes.toLocaleString('en-US')} bytes can be uploaded.`));
    if ((error as { type?: string }).type === 'entity.too.large' || (error as { status?: number }).status === 400) {
      return html(res, 400, messagePage('This form could not be read', 'Go back, reload the page and try again.'));
    }
    log.error({ err: error, path: req.path }, 'dashboard page failed');
    html(res, 500, messagePage('Something went wrong', 'The page could not be shown. Try again in a moment.'));
  };
  router.use(failed);
  return router;
}
