// /v1 allows no browser origin: a CORS preflight fails, and nothing sets Access-Control-Allow-Origin.
import type { RequestHandler } from 'express';
import { Problem } from '../../shared/platform/problems.ts';
import type { Deps } from '../defineOperation.ts';
import { sendProblem } from '../problemResponses.ts';

export function refuseBrowserPreflight({ config }: Deps): RequestHandler {
  return (req, res, next) => {
    if (req.method !== 'OPTIONS') return next();
    sendProblem(
      res,
      new Problem('method-not-allowed', '/v1 is called from a backend only: it allows no cross-origin browser request.', {
        headers: { Allow: 'GET, HEAD, POST' },
      }),
      config.errorsBase,
    );
  };
}
