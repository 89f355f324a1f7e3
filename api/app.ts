// The Express application: logging and the pages' security headers for every answer, /v1 behind
// its filters in the order the contract fixes (authentication, scope, idempotency, then routing,
// which starts by refusing a URL that cannot be understood), then the public routes, each behind
// that same URL check.
import express, { type Router } from 'express';
import { authenticate, requireScope } from './filters/authenticate.ts';
import { refuseBrowserPreflight } from './filters/browserOrigins.ts';
import { idempotency } from './filters/idempotency.ts';
import { buildOpenApiDocument, openApiRoutes, REFERENCE_SCRIPT_PATH } from './openapi.ts';
import { type Deps, handlerFor, keptAnswerRenderers, type Operation } from './defineOperation.ts';
import { operations } from './routes/index.ts';
import { interactionErrorPage } from './oauth/interactions/errorPage.ts';
import { interactionRoutes } from './oauth/interactions/routes.ts';
import { dashboardRoutes } from './dashboard/routes.ts';
import { DASHBOARD_PATH } from './dashboard/session.ts';
import { peopleRoutes } from './people/connections.ts';
import { PEOPLE_PATH } from './people/session.ts';
import { requestLog } from './requestLog.ts';
import { securityHeaders } from './html.ts';
import { refuseMalformedUrl } from './malformed.ts';
import { errorHandler, methodNotAllowed, notFound, problemIndex, problemPage } from './problemResponses.ts';

function mount(router: Router, ops: Operation[], deps: Deps, stripPrefix = ''): void {
  const byPath = Map.groupBy(ops, (op) => op.path);
  for (const [path, pathOps] of byPath) {
    const route = router.route(path.slice(stripPrefix.length) || '/');
    for (const op of pathOps) route[op.method](handlerFor(op, deps));
    const allowed = [...new Set(pathOps.flatMap((op) => (op.method === 'get' ? ['GET', 'HEAD'] : [op.method.toUpperCase()])))];
    route.all(methodNotAllowed(allowed));
  }
}

export function createApp(deps: Deps): express.Express {
  const { config, log } = deps;
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('trust proxy', config.trustProxy);

  app.use(requestLog(log), securityHeaders());
  if (deps.metrics) app.use(deps.metrics.measure);

  // /v1 first: it has its own filters, URL check and 404, so nothing under /v1 goes further.
  const v1 = express.Router({ strict: false });
  const idempotent = idempotency(deps, keptAnswerRenderers(operations));
  v1.use(refuseBrowserPreflight(deps), authenticate(deps), requireScope(deps), idempotent, refuseMalformedUrl());
  mount(v1, operations.filter((op) => op.surface === 'v1'), deps, '/v1');
  v1.use(notFound());
  app.use('/v1', v1);

  app.use(refuseMalformedUrl());
  const doc = buildOpenApiDocument(operations, config.baseUrl, config.errorsBase);
  const reference = openApiRoutes(doc);
  app.get('/openapi.json', reference.json);
  app.get('/docs', reference.docs);
  app.get(REFERENCE_SCRIPT_PATH, reference.script);

  // Problem type pages, when ERRORS_BASE is served by this host.
  if (config.errorsBase.startsWith(`${config.baseUrl}/`)) {
    const problemsPath = config.errorsBase.slice(config.baseUrl.length);
    app.get(`${problemsPath}/`, problemIndex());
    app.get(`${problemsPath}/:type`, problemPage(config.baseUrl, config.errorsBase));
  }

  mount(app, operations.filter((op) => op.surface === 'public'), deps);

  // The authorization server: our sign-in and consent pages, then the provider for exactly the
  // endpoints we offer (its discovery, JWKS and other routes stay unreachable). What goes wrong
  // on the pages' paths (a malformed URL or form) is answered as a page of the flow.
  const { provider, keys } = deps.oauth;
  app.use('/oauth/interaction/:uid', interactionRoutes({ config, pool: deps.pool, log, provider, csrfKey: keys.cookieKeys[0]! }));
  // People's own page of the programs they connected (sign-in as on the consent pages).
  app.use(PEOPLE_PATH, peopleRoutes({ config, pool: deps.pool, log, sessionKey: keys.cookieKeys[0]! }));
  // The people's dashboard: their datasets' figures, versions, uploads and exports (sign-in as on the consent pages).
  app.use(DASHBOARD_PATH, dashboardRoutes({ config, pool: deps.pool, log, boss: deps.boss, outcomes: deps.outcomes, blobs: deps.blobs, sessionKey: keys.cookieKeys[0]! }));
  app.use('/oauth/interaction', interactionErrorPage(log));
  const serveOAuth = provider.callback();
  // With the methods the provider takes on each (OPTIONS: its CORS preflight for browser clients,
  // nothing else); another method gets our 405 rather than the provider's plain-text 404.
  const offered: [RegExp, string[]][] = [
    [/^\/authorize(?:\/[\w-]+)?$/, ['GET', 'HEAD']],
    [/^\/(?:token|revoke)$/, ['POST', 'OPTIONS']],
    [/^\/register$/, ['POST']],
  ];
  app.use('/oauth', (req, res, next) => {
    const methods = offered.find(([path]) => path.test(req.path))?.[1];
    if (!methods) return next();
    const preflight = req.method === 'OPTIONS' && req.get('origin') !== undefined && req.get('access-control-request-method') !== undefined;
    if (!methods.includes(req.method) || (req.method === 'OPTIONS' && !preflight)) {
      return methodNotAllowed(methods.filter((m) => m !== 'OPTIONS'))(req, res, next);
    }
    serveOAuth(req, res);
  });

  app.use(notFound());
  app.use(errorHandler(config.errorsBase, log));
  return app;
}
