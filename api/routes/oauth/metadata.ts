// The authorization server's metadata (RFC 8414) and the API's protected-resource metadata
// (RFC 9728), served from our own routes: the provider's discovery document would advertise
// OpenID Connect, which we do not offer.
import { z } from 'zod';
import type { Config } from '../../../shared/platform/config.ts';
import { defineOperation } from '../../defineOperation.ts';
import { PROTECTED_RESOURCE_METADATA_PATH, resourceOf } from '../../oauth/provider.ts';
import { scopes } from '../../principal.ts';

/** The metadata as a service at https://api.example.com publishes it: the reference's examples. */
const EXAMPLE_CONFIG = { baseUrl: 'https://api.example.com' } as Config;

const AuthorizationServerMetadata = z
  .object({
    issuer: z.string(),
    authorization_endpoint: z.string(),
    token_endpoint: z.string(),
    registration_endpoint: z.string(),
    revocation_endpoint: z.string(),
    scopes_supported: z.array(z.string()),
    response_types_supported: z.array(z.string()),
    grant_types_supported: z.array(z.string()),
    code_challenge_methods_supported: z.array(z.string()),
    token_endpoint_auth_methods_supported: z.array(z.string()),
    revocation_endpoint_auth_methods_supported: z.array(z.string()),
    authorization_response_iss_parameter_supported: z.boolean(),
  })
  .meta({ id: 'AuthorizationServerMetadata' });

const ProtectedResourceMetadata = z
  .object({
    resource: z.string(),
    authorization_servers: z.array(z.string()),
    scopes_supported: z.array(z.string()),
    bearer_methods_supported: z.array(z.string()),
  })
  .meta({ id: 'ProtectedResourceMetadata' });

export function authorizationServerMetadata(config: Config): z.infer<typeof AuthorizationServerMetadata> {
  const base = config.baseUrl;
  return {
    issuer: base,
    authorization_endpoint: `${base}/oauth/authorize`,
    token_endpoint: `${base}/oauth/token`,
    registration_endpoint: `${base}/oauth/register`,
    revocation_endpoint: `${base}/oauth/revoke`,
    scopes_supported: [...scopes],
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    authorization_response_iss_parameter_supported: true,
  };
}

export function protectedResourceMetadata(config: Config): z.infer<typeof ProtectedResourceMetadata> {
  return {
    resource: resourceOf(config),
    authorization_servers: [config.baseUrl],
    scopes_supported: [...scopes],
    bearer_methods_supported: ['header'],
  };
}

/** A public JSON document derived from config, cacheable for five minutes. */
const metadataDocument = (o: { operationId: string; path: string; summary: string; description: string; schema: z.ZodType; body: (config: Config) => object }) =>
  defineOperation({
    operationId: o.operationId,
    method: 'get',
    path: o.path,
    surface: 'public',
    tags: ['OAuth'],
    summary: o.summary,
    description: o.description,
    responses: { 200: { description: 'The metadata.', schema: o.schema, example: o.body(EXAMPLE_CONFIG) } },
    async handle({ res, deps }) {
      res.set('Cache-Control', 'public, max-age=300').json(o.body(deps.config));
    },
  });

export const getAuthorizationServerMetadata = metadataDocument({
  operationId: 'getAuthorizationServerMetadata',
  path: '/.well-known/oauth-authorization-server',
  summary: 'Authorization server metadata',
  description: 'RFC 8414. Clients read the endpoints from here rather than hard-coding them. Needs no credential.',
  schema: AuthorizationServerMetadata,
  body: authorizationServerMetadata,
});

const protectedResource = (path: string, operationId: string) =>
  metadataDocument({
    operationId,
    path,
    summary: 'Protected resource metadata',
    description: 'RFC 9728, for the API (/v1): where its tokens come from and which scopes it knows. Needs no credential.',
    schema: ProtectedResourceMetadata,
    body: protectedResourceMetadata,
  });

export const getProtectedResourceMetadata = protectedResource(PROTECTED_RESOURCE_METADATA_PATH, 'getProtectedResourceMetadata');
export const getProtectedResourceMetadataRoot = protectedResource('/.well-known/oauth-protected-resource', 'getProtectedResourceMetadataAtRoot');
