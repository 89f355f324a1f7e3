// What the current HTTP request is, for whatever it starts: a job sent while answering a request
// carries the request's id and account, so that the worker's log lines of that job name them and
// a request can be followed to its build. Set once per request by the request log (api/requestLog.ts).
import { AsyncLocalStorage } from 'node:async_hooks';

export type RequestContext = { requestId: string; accountId?: string };

const current = new AsyncLocalStorage<RequestContext>();

/** Runs `work` (the rest of the request's handling) as part of the request `context`. */
export function withRequestContext<T>(context: RequestContext, work: () => T): T {
  return current.run(context, work);
}

/** The caller is known (authenticated): later jobs of the request name its account. */
export function setRequestAccount(accountId: string): void {
  const context = current.getStore();
  if (context) context.accountId = accountId;
}

/** The request's id and account to put in a job's data (nothing outside a request). */
export function jobOrigin(): { requestId?: string; accountId?: string } {
  const context = current.getStore();
  return context ? { requestId: context.requestId, ...(context.accountId && { accountId: context.accountId }) } : {};
}
