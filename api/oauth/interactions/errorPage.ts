// The flow's answer to a request that cannot be understood, mounted by api/app.ts after the
// interaction routes: a page of the flow, as every other answer there.
import type { ErrorRequestHandler } from 'express';
import type { Logger } from '../../../shared/platform/log.ts';
import { Problem } from '../../../shared/platform/problems.ts';
import { messagePage } from '../pages.ts';

/** Why a request to a page of the flow was refused, by status: what the person reads. */
const refusals: Record<number, { title: string; message: string }> = {
  400: { title: 'This request cannot be read', message: 'The address or the form sent is not valid. Go back to the application and connect again.' },
  413: { title: 'This form is too large', message: 'The form sent is larger than this page accepts. Go back, check what you entered and send it again.' },
  415: { title: 'This form cannot be read', message: 'The form was sent in a format this page does not take (it takes a plain UTF-8 form). Go back and send it again.' },
};

/**
 * A request to a page of the flow that cannot be understood (a malformed address, a form too
 * large, with too many fields, compressed or in another charset) gets a page of the flow with
 * its 4xx, as every other answer there; anything else goes on to the service's error handler.
 */
export function interactionErrorPage(log: Logger): ErrorRequestHandler {
  return (error, _req, res, next) => {
    const status = error instanceof Problem ? error.status : (error as { status?: unknown; expose?: unknown }).expose === true ? Number((error as { status: unknown }).status) : NaN;
    if (res.headersSent || !(status >= 400 && status < 500)) return next(error);
    log.info({ status, type: (error as { type?: string }).type ?? (error as Problem).type }, 'oauth page request refused');
    const refusal = refusals[status] ?? refusals[400]!;
    res.status(status).set({ 'Cache-Control': 'no-store' }).type('html').send(messagePage(refusal.title, refusal.message));
  };
}
