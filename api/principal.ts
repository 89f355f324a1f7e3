// Who is calling: set by the authentication filter, read by everything after it.
import type { Response } from 'express';
import type { Mode } from '../shared/tenancy/apiKeys.ts';
import type { Tenant } from '../shared/domain/datasets.ts';
import { setRequestAccount } from '../shared/platform/requestContext.ts';

export const scopes = ['service.read', 'service.write'] as const;
export type Scope = (typeof scopes)[number];

export type Principal = {
  /** An API key, or an OAuth access token (always live mode, acting for the account chosen at consent). */
  kind: 'api_key' | 'oauth_token';
  /** The key's id, or the OAuth grant's id. */
  credentialId: string;
  accountId: string;
  mode: Mode;
  scopes: readonly Scope[];
  /** The credential's first 12 characters: safe to log and to quote in support conversations. */
  label: string;
};

export function setPrincipal(res: Response, principal: Principal): void {
  res.locals['principal'] = principal;
  setRequestAccount(principal.accountId);
}

export function principalOf(res: Response): Principal {
  const principal = res.locals['principal'] as Principal | undefined;
  if (!principal) throw new Error('no principal: the authentication filter did not run');
  return principal;
}

export function tenantOf(res: Response): Tenant {
  const { accountId, mode } = principalOf(res);
  return { accountId, mode };
}
