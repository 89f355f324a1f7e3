// The person's side of the authorization flow, at /oauth/interaction/:uid (mounted by api/app.ts
// before the provider). The provider sends the browser here when it needs a sign-in (prompt
// "login") or a consent (prompt "consent"); these routes answer with a page, or finish the
// interaction and send the browser back to the provider. The forms' CSRF defence: csrf.ts.
import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import { PasswordChecksBusy } from '../../../shared/platform/passwords.ts';
import { acceptInvitation, decideConsent } from './consent.ts';
import type { InteractionDeps } from './interaction.ts';
import { showInteraction } from './page.ts';
import { signInWithPassword } from './signIn.ts';
import { signUpWithPassword } from './signUp.ts';
import { switchPerson } from './switchPerson.ts';
import { sendPasswordChecksBusy } from './views.ts';

type Handler = (deps: InteractionDeps, req: Request, res: Response) => Promise<void>;

export function interactionRoutes(deps: InteractionDeps): Router {
  const router = express.Router({ mergeParams: true });
  // CSP, X-Frame-Options and nosniff are set for every page of the service (api/html.ts).
  router.use((_req, res, next) => {
    res.set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' });
    next();
  });
  // Our forms are small UTF-8 forms of a few fields; anything else is refused (errorPage.ts).
  router.use(express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 20, inflate: false }));

  const serve =
    (handler: Handler): RequestHandler =>
    (req, res) =>
      handler(deps, req, res);
  router.get('/', serve(showInteraction));
  router.post('/login', serve(checkingPasswords(signInWithPassword)));
  router.post('/signup', serve(checkingPasswords(signUpWithPassword)));
  router.post('/consent', serve(decideConsent));
  router.post('/invitation', serve(acceptInvitation));
  router.post('/switch', serve(switchPerson));
  return router;
}

/** Sign-in and sign-up check passwords; when too many checks wait, the person is asked to retry. */
function checkingPasswords(handler: Handler): Handler {
  return async (deps, req, res) => {
    try {
      await handler(deps, req, res);
    } catch (error) {
      if (!(error instanceof PasswordChecksBusy)) throw error;
      sendPasswordChecksBusy(res);
    }
  };
}
