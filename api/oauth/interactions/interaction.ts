// What every page of the person's side of the flow works with: the interaction the provider
// created (its uid is in the path), the paths of its forms, and how it is finished.
import type { Request, Response } from 'express';
import type { InteractionResults } from 'oidc-provider';
import type { Config } from '../../../shared/platform/config.ts';
import type { Pool } from '../../../shared/platform/db.ts';
import type { Logger } from '../../../shared/platform/log.ts';
import type { AuthorizationServer } from '../provider.ts';

export type Interaction = Awaited<ReturnType<AuthorizationServer['interactionDetails']>>;

/** csrfKey signs the forms' tokens (csrf.ts). */
export type InteractionDeps = { config: Config; pool: Pool; log: Logger; provider: AuthorizationServer; csrfKey: string };

/** The page of an interaction and the forms it posts to (routes.ts mounts them). */
export function interactionPaths(uid: string) {
  const base = `/oauth/interaction/${encodeURIComponent(uid)}`;
  return {
    base,
    login: `${base}/login`,
    signup: `${base}/signup`,
    signupPage: `${base}?signup=1`,
    consent: `${base}/consent`,
    invitation: `${base}/invitation`,
    switchPerson: `${base}/switch`,
  };
}

/** Hands the result to the provider, which sends the browser back to the authorization endpoint. */
export function finishInteraction(provider: AuthorizationServer, req: Request, res: Response, result: InteractionResults, merge = false): Promise<void> {
  return provider.interactionFinished(req, res, result, { mergeWithLastSubmission: merge });
}
