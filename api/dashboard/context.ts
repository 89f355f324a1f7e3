// What every dashboard route starts from: who is looking (a signed-in person and the account and
// mode they look at), the dataset of the path within them, and the pages that refuse (403) or
// find nothing (404). Routes: accessRoutes.ts (signing in, up, out, the switch) and
// datasetRoutes.ts (datasets, versions, uploads, exports).
import express, { type Request, type Response } from 'express';
import { type Dataset, findDataset, type Tenant } from '../../shared/domain/datasets.ts';
import type { Deps } from '../defineOperation.ts';
import { messagePage } from './layout.ts';
import { noAccountPage } from './datasetsPage.ts';
import { DASHBOARD_PATH, DashboardSessions, type Viewer } from './session.ts';

export type DashboardDeps = Pick<Deps, 'config' | 'pool' | 'log' | 'boss' | 'outcomes' | 'blobs'> & { sessionKey: string };

/** A signed-in person looking at one of their accounts in one mode. */
export type Looking = Viewer & { tenant: Tenant };

export type DashboardContext = ReturnType<typeof dashboardContext>;

export function dashboardContext(deps: DashboardDeps) {
  const sessions = new DashboardSessions(deps.pool, deps.sessionKey, deps.config.baseUrl);
  const html = (res: Response, status: number, body: string) => void res.status(status).type('html').send(body);
  const refused = (res: Response, viewer?: Viewer) =>
    html(res, 403, messagePage('This form has expired', 'Nothing was changed. Go back, reload the page and try again.', viewer));
  const notFound = (res: Response, viewer?: Viewer) =>
    html(res, 404, messagePage('Not found', 'There is nothing here: it may be in another account or mode, or it was deleted.', viewer));

  /** The signed-in person looking at an account; else the sign-in page (GET), a 403 (a form), or the page for a person with no account. */
  const viewing = async (req: Request, res: Response): Promise<Looking | undefined> => {
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

  return {
    deps,
    sessions,
    html,
    refused,
    notFound,
    viewing,
    /** The urlencoded forms of the pages (small). */
    forms: express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 20, inflate: false }),
    /** A signed-in person's urlencoded form, when it carries their token; else the 403 page. */
    postedForm: async (req: Request, res: Response): Promise<Looking | undefined> => {
      const viewer = await viewing(req, res);
      if (!viewer) return undefined;
      if (!sessions.formIsOurs(req, viewer, req.body)) return void refused(res, viewer);
      return viewer;
    },
    /** The dataset of the path, in the account and mode looked at; else the 404 page. */
    datasetOf: async (req: Request, res: Response, viewer: Looking): Promise<Dataset | undefined> => {
      const dataset = await findDataset(deps.pool, viewer.tenant, String(req.params['datasetId']));
      if (!dataset) notFound(res, viewer);
      return dataset;
    },
    datasetPath: (id: string) => `${DASHBOARD_PATH}/datasets/${encodeURIComponent(id)}`,
    versionPath: (datasetId: string, versionId: string) => `${DASHBOARD_PATH}/datasets/${encodeURIComponent(datasetId)}/versions/${encodeURIComponent(versionId)}`,
  };
}
