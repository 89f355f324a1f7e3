// /dashboard: the people's dashboard (../shared/spec/contract.md, "The people's dashboard").
// Server-rendered pages for people linked to an account: sign in and sign up, the datasets of
// one account in one mode, a dataset's figures, versions, upload and exports. The figures and
// every change go through the domain (shared/), exactly as the API's operations do; nothing
// here imports them. Anything of another account or mode is a 404 page; a form without its
// token is a 403 page and changes nothing. Every page carries the security headers set for all
// of the app's answers (api/html.ts), and none is cached.
import express, { type ErrorRequestHandler, type Router } from 'express';
import { TooLarge } from '../../shared/blobs/blobStore.ts';
import { accessRoutes } from './accessRoutes.ts';
import { dashboardContext, type DashboardDeps } from './context.ts';
import { datasetRoutes } from './datasetRoutes.ts';
import { messagePage } from './layout.ts';

export type { DashboardDeps } from './context.ts';

export function dashboardRoutes(deps: DashboardDeps): Router {
  const ctx = dashboardContext(deps);
  const router = express.Router();
  router.use((_req, res, next) => {
    res.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' });
    next();
  });
  accessRoutes(router, ctx);
  datasetRoutes(router, ctx);

  // Anything else under /dashboard is a page that is not there.
  router.use(async (req, res) => ctx.notFound(res, await ctx.sessions.viewerOf(req).catch(() => undefined)));
  const failed: ErrorRequestHandler = (error, req, res, next) => {
    if (res.headersSent) return next(error);
    if (error instanceof TooLarge) {
      return ctx.html(res, 413, messagePage('The file is too large', `Files up to ${deps.config.maxUploadBytes.toLocaleString('en-US')} bytes can be uploaded.`));
    }
    if ((error as { type?: string }).type === 'entity.too.large' || (error as { status?: number }).status === 400) {
      return ctx.html(res, 400, messagePage('This form could not be read', 'Go back, reload the page and try again.'));
    }
    deps.log.error({ err: error, path: req.path }, 'dashboard page failed');
    ctx.html(res, 500, messagePage('Something went wrong', 'The page could not be shown. Try again in a moment.'));
  };
  router.use(failed);
  return router;
}
