// POST /oauth/interaction/:uid/switch ("Not you?"): ends the sign-in and starts the same
// authorization request again, so that someone else can sign in.
import type { Request, Response } from 'express';
import { endSession } from '../../../shared/oauth/records.ts';
import type { InteractionDeps } from './interaction.ts';
import { loadInteractionForPost } from './load.ts';

export async function switchPerson(deps: InteractionDeps, req: Request, res: Response): Promise<void> {
  const details = await loadInteractionForPost(deps, req, res, 'consent');
  if (!details) return;
  if (details.session?.uid) await endSession(deps.pool, details.session.uid);
  const again = new URLSearchParams();
  for (const [name, value] of Object.entries(details.params)) if (typeof value === 'string') again.set(name, value);
  res.redirect(303, `/oauth/authorize?${again}`);
}
