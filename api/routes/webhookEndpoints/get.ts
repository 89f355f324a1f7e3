import { findEndpoint } from '../../../shared/domain/webhookEndpoints.ts';
import { Problem } from '../../../shared/platform/problems.ts';
import { defineOperation } from '../../defineOperation.ts';
import { tenantOf } from '../../principal.ts';
import { EndpointIdParams, endpointExample, WebhookEndpointSchema } from './schemas.ts';

export const endpointNotFound = (id: string) => new Problem('not-found', `No webhook endpoint with id ${JSON.stringify(id)} exists.`);

export default defineOperation({
  operationId: 'getWebhookEndpoint',
  method: 'get',
  path: '/v1/webhook-endpoints/:id',
  surface: 'v1',
  tags: ['Webhooks'],
  summary: 'Retrieve a webhook endpoint',
  description: 'The endpoint, without its secret (shown only when it was created).',
  params: EndpointIdParams,
  responses: { 200: { description: 'The endpoint.', schema: WebhookEndpointSchema, example: endpointExample } },
  problems: ['not-found'],
  async handle({ res, deps, params }) {
    const endpoint = await findEndpoint(deps.pool, tenantOf(res), params.id);
    if (!endpoint) throw endpointNotFound(params.id);
    res.json(endpoint);
  },
});
